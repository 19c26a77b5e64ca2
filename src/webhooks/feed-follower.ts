import { doiKey } from '../doi/index.ts';
import { decodeCursor, encodeCursor, type FeedCursor, keyHash } from '../store/index.ts';
import {
  allSubscriptions,
  type FeedEvent,
  OUTBOX_FROM_FEED,
  outboxKey,
  pair,
  pairRange,
  type Subscription,
  type WebhookDbs,
} from './subscriptions-db.ts';

/** The change feed as the webhooks read it: the store's ChangeFeedView gives exactly this. */
export interface FeedSource {
  isTip(cursorText: string): boolean;
  changesAfter(
    after: FeedCursor | undefined,
    limit: number,
  ): { items: string[]; next: FeedCursor; more: boolean } | { refused: string; message: string };
}

const PAGE = 1000;

/**
 * Follows the change feed into the webhooks' events and outboxes (docs/design.md, "Push alerts"). Each page of the
 * feed is one transaction of the webhooks environment: its events, each with the list the feed showed before
 * (`previous`, from `last`), the outbox entries of every subscription that watches the work, and the feed cursor
 * after it. A crash loses the page in flight and nothing else; the next start reads it again from the cursor. The
 * subscriptions are read inside that transaction: one created before it is committed gets the page's events.
 */
export class FeedFollower {
  constructor(
    private readonly dbs: WebhookDbs,
    private readonly feed: FeedSource,
    private readonly now: () => number,
  ) {}

  /**
   * Takes every change after the saved cursor; returns the subscriptions given new events. The first time (no
   * cursor) the feed is read to its end to learn each work's list, and nothing is sent: what changed before the
   * webhooks existed is no one's news. A cursor the feed refuses (a store rebuilt with another history) is
   * followed by a read of the whole feed where only works whose list differs from `last` become events.
   */
  poll(): Set<string> {
    const touched = new Set<string>();
    const saved = this.dbs.meta.get('feedCursor') as string | undefined;
    if (saved !== undefined && this.feed.isTip(saved)) return touched;
    let after = saved === undefined ? undefined : decodeCursor(saved);
    const learning = saved === undefined;
    for (;;) {
      const page = this.feed.changesAfter(after, PAGE);
      if ('refused' in page) {
        if (after === undefined) return touched; // the start is never refused; nothing to do if it were
        after = undefined; // read the whole feed again; unchanged lists make no event
        continue;
      }
      this.take(page.items, page.next, learning, touched);
      if (!page.more) return touched;
      after = page.next;
    }
  }

  private take(items: string[], next: FeedCursor, learning: boolean, touched: Set<string>): void {
    const { dbs } = this;
    const at = this.now();
    dbs.root.transactionSync(() => {
      const subs = allSubscriptions(dbs);
      const byPrefix = subs.filter((s) => s.watch === 'prefixes');
      const everything = subs.filter((s) => s.watch === 'everything');
      const live = new Map(subs.map((s) => [s.id, s]));
      let seq = (dbs.meta.get('nextEvent') as number | undefined) ?? 1;
      for (const item of items) {
        const { doi, updates } = JSON.parse(item) as { doi: string; updates: { updateType: string }[] };
        const key = doiKey(doi);
        const now = JSON.stringify(updates);
        const previous = dbs.last.get(key) ?? '[]';
        if (previous === now) continue;
        if (now === '[]') dbs.last.removeSync(key);
        else dbs.last.putSync(key, now);
        if (learning) continue;
        const event = seq++;
        const e: FeedEvent = { doi, updates: now, previous, at };
        dbs.events.putSync(event, e);
        const types = typesOf(e);
        const hash = keyHash(key);
        const to = (s: Subscription | undefined) => {
          if (!s || !wantsTypes(s, types)) return;
          dbs.outbox.putSync(outboxKey(s.id, event), OUTBOX_FROM_FEED);
          touched.add(s.id);
        };
        // a list's watchers in one range read, not a look-up per subscription
        for (const { key: k } of dbs.watch.getRange(pairRange(key))) to(live.get((k as string).slice(key.length + 1)));
        for (const s of byPrefix) if (underPrefixes(s, hash)) to(s);
        for (const s of everything) to(s);
      }
      dbs.meta.putSync('nextEvent', seq);
      dbs.meta.putSync('feedCursor', encodeCursor(next));
    });
  }
}

/** The update types an event is about: those of its list now and of the one before. */
function typesOf(e: FeedEvent): Set<string> {
  const lists = [...JSON.parse(e.updates), ...JSON.parse(e.previous)] as { updateType: string }[];
  return new Set(lists.map((u) => u.updateType));
}

const wantsTypes = (s: Subscription, types: Set<string>) => s.types === null || s.types.some((t) => types.has(t));
const underPrefixes = (s: Subscription, hash: string) => s.prefixes.some((p) => hash.startsWith(p));

/** Whether a subscription watches an event's work (the follower's rule, one subscription at a time). */
function watches(dbs: WebhookDbs, s: Subscription, e: FeedEvent): boolean {
  if (!wantsTypes(s, typesOf(e))) return false;
  const key = doiKey(e.doi);
  if (s.watch === 'everything') return true;
  if (s.watch === 'prefixes') return underPrefixes(s, keyHash(key));
  return dbs.watchBySub.doesExist(pair(s.id, key));
}

/**
 * Queues again, as the subscription's next replay n, every event from `fromEvent` on that it watches, looking at
 * `limit` events at most (one synchronous transaction: bounded, as it runs on a request's thread); how many, and
 * the first event not looked at when the limit stopped it.
 */
export function requeue(
  dbs: WebhookDbs,
  s: Subscription,
  fromEvent: number,
  limit: number,
): { queued: number; nextEvent?: number } {
  let queued = 0;
  let nextEvent: number | undefined;
  dbs.root.transactionSync(() => {
    const n = ((dbs.meta.get(`replays:${s.id}`) as number | undefined) ?? 0) + 1;
    dbs.meta.putSync(`replays:${s.id}`, n);
    let seen = 0;
    for (const { key, value } of dbs.events.getRange({ start: fromEvent, limit: limit + 1 })) {
      if (seen++ === limit) {
        nextEvent = key as number;
        break;
      }
      if (!watches(dbs, s, value)) continue;
      dbs.outbox.putSync(outboxKey(s.id, key as number), OUTBOX_FROM_FEED + n);
      queued++;
    }
  });
  return nextEvent === undefined ? { queued } : { queued, nextEvent };
}
