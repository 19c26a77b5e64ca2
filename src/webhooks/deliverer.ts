import { Deliveries, type DeliveryOutcome, type DeliverySettings } from './deliveries.ts';
import { FeedFollower, type FeedSource } from './feed-follower.ts';
import {
  allSubscriptions,
  firstOutboxEntry,
  pair,
  pairRange,
  type Subscription,
  secondOf,
  type WebhookDbs,
} from './subscriptions-db.ts';

/** watch entries removed per transaction when a subscription is deleted */
const SWEEP_CHUNK = 50_000;
/** events removed per transaction when old ones are pruned */
const PRUNE_CHUNK = 10_000;
/** how often old events are looked for (and at each start) */
const PRUNE_EVERY_MS = 3_600_000;

/** What the subscription routes ask of whatever follows the feed and delivers: in this process or another. */
export interface DeliveryRunner {
  /** follows the feed every pollMs and delivers; a deletion a stop interrupted goes on */
  start(): void;
  /** settles once the feed was first read after start(): a change after it is delivered, not learnt */
  readonly running: Promise<void>;
  /** takes the feed's new changes now (tests call it to not wait for the timer) */
  poll(): void;
  /** look again at these subscriptions: a resume, a replay */
  wake(ids: Iterable<string>): void;
  /** removes the lists of deleted subscriptions (meta `deleting`) */
  sweep(): void;
  /** stops, after the deliveries in flight have ended */
  close(): Promise<void>;
  /** deliveries in flight */
  readonly active: number;
  /** deliveries by outcome since the start */
  readonly outcomes: ReadonlyMap<DeliveryOutcome, number>;
}

export interface DelivererSettings extends DeliverySettings {
  pollMs: number;
  /** events older than this are removed once no subscription has them still to send (a replay cannot reach them) */
  keepEventsMs: number;
  now?: () => number;
  random?: () => number;
  /** told when a subscription is paused by its failures (the daemon logs it) */
  onPaused?: (s: Subscription) => void;
  /** told when following the feed or recording a delivery failed (a store that cannot be written): logged, retried */
  onError?: (e: unknown) => void;
}

/**
 * Follows the change feed into events and delivers them, in this process (docs/design.md, "Push alerts"). The
 * daemon runs it in its delivery process (delivery-process.ts); tests run it beside themselves.
 */
export class Deliverer implements DeliveryRunner {
  private readonly follower: FeedFollower;
  private readonly deliveries: Deliveries;
  private timer: Timer | undefined;
  private pruneTimer: Timer | undefined;
  private sweeping: Promise<void> = Promise.resolve();
  private closed = false;
  private started!: () => void;
  readonly running = new Promise<void>((resolve) => {
    this.started = resolve;
  });

  constructor(
    private readonly dbs: WebhookDbs,
    feed: FeedSource,
    private readonly settings: DelivererSettings,
  ) {
    const now = settings.now ?? Date.now;
    this.follower = new FeedFollower(dbs, feed, now);
    this.deliveries = new Deliveries(dbs, settings, now, settings.random, settings.onPaused, settings.onError);
  }

  start(): void {
    this.sweep();
    const tick = () => {
      try {
        // every subscription not paused is looked at again on each tick (the first, at start, too), before the feed
        // is read, whose failure must not hold what the outboxes already have: a wake can go astray. In the bench,
        // after 1,000 resumes in a row, the delivery process had passed over 850-890 of them (a read that still saw
        // them paused, though it follows the daemon's commit and message)
        this.deliveries.wake(
          allSubscriptions(this.dbs)
            .filter((s) => !s.paused)
            .map((s) => s.id),
        );
        this.poll();
      } catch (e) {
        // the page in flight was not committed: the next tick reads it again from the saved cursor
        this.settings.onError?.(e);
      } finally {
        if (!this.closed) this.timer = setTimeout(tick, this.settings.pollMs);
      }
    };
    tick();
    const prune = () => {
      this.prune();
      this.pruneTimer = setTimeout(prune, PRUNE_EVERY_MS);
    };
    prune();
    this.started();
  }

  poll(): void {
    this.deliveries.wake(this.follower.poll());
  }

  wake(ids: Iterable<string>): void {
    this.deliveries.wake(ids);
  }

  get active(): number {
    return this.deliveries.active;
  }

  get outcomes(): ReadonlyMap<DeliveryOutcome, number> {
    return this.deliveries.outcomes;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.pruneTimer);
    await this.deliveries.close();
    await this.sweeping;
  }

  /**
   * Runs `job` after the cleaning before it (a stop waits for them all). One that fails (a store that cannot be
   * written) is told to onError; the next runs still, and the next start or hour tries again.
   */
  private clean(job: () => Promise<void>): void {
    this.sweeping = this.sweeping.then(job).catch((e: unknown) => this.settings.onError?.(e));
  }

  /**
   * Removes the events older than keepEventsMs from the first on, up to the first one a subscription still has to
   * send (paused ones too: nothing queued is lost), a chunk per transaction.
   */
  private prune(): void {
    const { dbs } = this;
    this.clean(async () => {
      const oldest = (this.settings.now ?? Date.now)() - this.settings.keepEventsMs;
      for (;;) {
        let more = false;
        dbs.root.transactionSync(() => {
          // read in the transaction: an event queued since is not removed
          const firsts = allSubscriptions(dbs).map((s) => firstOutboxEntry(dbs, s.id)?.event ?? Infinity);
          const keepFrom = Math.min(...firsts);
          let n = 0;
          for (const { key, value } of dbs.events.getRange({ limit: PRUNE_CHUNK })) {
            if ((key as number) >= keepFrom || value.at >= oldest) break;
            dbs.events.removeSync(key as number);
            n++;
          }
          more = n === PRUNE_CHUNK;
        });
        if (!more || this.closed) return; // a stop waits for one chunk at most
        await new Promise((r) => setImmediate(r));
      }
    });
  }

  /** Removes deleted subscriptions' watch lists, outboxes and attempts, a chunk per transaction. */
  sweep(): void {
    const { dbs } = this;
    this.clean(async () => {
      while (!this.closed) {
        const deleting = (dbs.meta.get('deleting') as string[] | undefined) ?? [];
        const id = deleting[0];
        if (id === undefined) return;
        let done = false;
        dbs.root.transactionSync(() => {
          let n = 0;
          for (const db of [dbs.watchBySub, dbs.outbox, dbs.attempts] as const)
            for (const { key } of db.getRange({ ...pairRange(id), limit: SWEEP_CHUNK - n })) {
              db.removeSync(key as string);
              if (db === dbs.watchBySub) dbs.watch.removeSync(pair(secondOf(key as string), id));
              n++;
            }
          if (n < SWEEP_CHUNK) {
            // read again: the daemon may have added another id since (its remove is a transaction of its own)
            const now = (dbs.meta.get('deleting') as string[] | undefined) ?? [];
            dbs.meta.putSync(
              'deleting',
              now.filter((x) => x !== id),
            );
            dbs.meta.removeSync(`attempts:${id}`);
            dbs.meta.removeSync(`replays:${id}`);
            done = true;
          }
        });
        if (!done) await new Promise((r) => setImmediate(r));
      }
    });
  }
}
