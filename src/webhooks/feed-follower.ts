import { doiKey } from '../doi/index.ts';
import { decodeCursor, encodeCursor, type FeedCursor, keyHash } from '../store/index.ts';
import {
  allSubscriptions,
  type FeedEvent,
  OUTBOX_FROM_FEED,
  pair,
  pairRange,
  type Subscription,
  seqText,
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
        dbs.events.putSync(event, { doi, updates: now, previous, at } satisfies FeedEvent);
        const types = new Set(
          [...updates, ...(JSON.parse(previous) as { updateType: string }[])].map((u) => u.updateType),
        );
        const wants = (s: Subscription | undefined) => s && (s.types === null || s.types.some((t) => types.has(t)));
        const hash = keyHash(key);
        const to = (s: Subscription) => {
          dbs.outbox.putSync(pair(s.id, seqText(event)), OUTBOX_FROM_FEED);
          touched.add(s.id);
        };
        for (const { key: k } of dbs.watch.getRange(pairRange(key))) {
          const s = live.get((k as string).slice(key.length + 1));
          if (wants(s)) to(s!);
        }
        for (const s of byPrefix) if (wants(s) && s.prefixes.some((p) => hash.startsWith(p))) to(s);
        for (const s of everything) if (wants(s)) to(s);
      }
      dbs.meta.putSync('nextEvent', seq);
      dbs.meta.putSync('feedCursor', encodeCursor(next));
    });
  }
}

/** Whether a subscription watches a work (a replay asks again of each event). */
export function watches(dbs: WebhookDbs, s: Subscription, event: FeedEvent): boolean {
  const key = doiKey(event.doi);
  if (s.types !== null) {
    const types = new Set(
      [...JSON.parse(event.updates), ...JSON.parse(event.previous)].map((u: { updateType: string }) => u.updateType),
    );
    if (!s.types.some((t) => types.has(t))) return false;
  }
  if (s.watch === 'everything') return true;
  if (s.watch === 'prefixes') {
    const hash = keyHash(key);
    return s.prefixes.some((p) => hash.startsWith(p));
  }
  return dbs.watchBySub.doesExist(pair(s.id, key));
}
