import { randomBytes } from 'node:crypto';
import { type Fault, fault } from '../base/index.ts';
import { readDoiInput } from '../doi/index.ts';
import { Deliverer, type DelivererSettings, type DeliveryRunner } from './deliverer.ts';
import { DeliveryProcess, type DeliveryProcessSpec } from './delivery-process.ts';
import { type FeedSource, requeue } from './feed-follower.ts';
import { newSecret } from './signing.ts';
import {
  type Attempt,
  allSubscriptions,
  firstOutboxEntry,
  openWebhookDbs,
  pair,
  pairRange,
  type Subscription,
  type WebhookDbs,
} from './subscriptions-db.ts';
import { targetProblem } from './target.ts';

export interface WebhookOptions extends DelivererSettings {
  path: string;
  /** subscriptions one integrator may hold: with perIntegratorConcurrency, what one integrator can take */
  maxSubscriptionsPerIntegrator: number;
  mapSizeBytes: number;
  /** events one replay call looks at (default MAX_REPLAY_EVENTS; tests make it small) */
  replayEventsPerCall?: number;
}

/** DOIs in one call that adds or removes watched DOIs */
export const MAX_DOIS_PER_CALL = 10_000;
/** DOIs one subscription may watch */
export const MAX_WATCHED = 10_000_000;
/** a rotated-out secret still signs this long, so a receiver can switch without losing a delivery */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
/**
 * Events one replay call looks at: a call is one synchronous transaction on the request's thread, so it is bounded
 * (an unbounded one over a long feed would hold every request); the answer's `nextEvent` says where to call again.
 */
export const MAX_REPLAY_EVENTS = 100_000;

export type WebhookFault = Fault<
  'BAD_REQUEST' | 'NOT_FOUND' | 'TARGET_REFUSED' | 'WATCH_LIST_FULL' | 'TOO_MANY_SUBSCRIPTIONS'
>;

/** What a subscription's owner is told of it (docs/interface.md, "Push alerts"). */
export interface SubscriptionView {
  id: string;
  url: string;
  types: string[] | null;
  watch: Subscription['watch'];
  prefixes?: string[];
  watching?: number;
  createdAt: string;
  paused: { at: string; reason: string } | null;
  deliveredThrough: number;
  pending: number;
  failing: { event: number; since: string; attempts: number; nextAttemptAt: string; lastError: string } | null;
  previousSecretValidUntil?: string;
}

export interface NewSubscription {
  url: string;
  types?: string[];
  watch?: Subscription['watch'];
  prefixes?: string[];
  dois?: string[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Push alerts (docs/design.md, "Push alerts"): integrators' subscriptions, kept in their own LMDB environment, and
 * what follows the change feed into events and delivers them (`deliveries`): the daemon's delivery process
 * (DeliveryProcessSpec), or a Deliverer in this process on a FeedSource (tests). Only the replica with `[webhooks]
 * enabled` makes one.
 */
export class Webhooks {
  private readonly dbs: WebhookDbs;
  readonly deliveries: DeliveryRunner;
  private readonly now: () => number;

  constructor(
    delivery: FeedSource | DeliveryProcessSpec,
    private readonly options: WebhookOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.dbs = openWebhookDbs(options.path, options.mapSizeBytes);
    if ('changesAfter' in delivery) this.deliveries = new Deliverer(this.dbs, delivery, options);
    else {
      const { now: _now, random: _random, onPaused, onError, resolve: _resolve, ...settings } = options;
      this.deliveries = new DeliveryProcess(
        delivery,
        { path: options.path, mapSizeBytes: options.mapSizeBytes, settings },
        { onPaused, onError },
      );
    }
  }

  /** Follows the feed every pollMs and delivers. */
  start(): void {
    this.deliveries.start();
  }

  /** Takes the feed's new changes now and wakes their subscriptions (tests call it to not wait for the timer). */
  poll(): void {
    this.deliveries.poll();
  }

  async close(): Promise<void> {
    await this.deliveries.close();
    await this.dbs.root.close();
  }

  // --- an integrator's subscriptions ---

  /** A new subscription; its target's name is resolved and checked first (a private or loopback one is refused). */
  async create(
    integrator: string,
    req: NewSubscription,
  ): Promise<{ view: SubscriptionView; secret: string } | WebhookFault> {
    const problem = await targetProblem(req.url, this.options);
    if (problem) return fault('TARGET_REFUSED', problem);
    // counted after the lookup's await, with nothing awaited until the subscription is in `subs`
    const max = this.options.maxSubscriptionsPerIntegrator;
    const held = this.ownedBy(integrator).length;
    if (held >= max)
      return fault(
        'TOO_MANY_SUBSCRIPTIONS',
        `an integrator holds at most ${max} subscriptions; you hold ${held}: delete one, or watch more DOIs with one`,
      );
    const watch = req.watch ?? 'list';
    if (watch === 'prefixes' && !req.prefixes?.length)
      return fault('BAD_REQUEST', 'prefixes: a subscription that watches hash prefixes needs at least one');
    if (watch !== 'prefixes' && req.prefixes !== undefined)
      return fault(
        'BAD_REQUEST',
        `prefixes: only a subscription with "watch": "prefixes" takes them (this one: "${watch}")`,
      );
    if (watch !== 'list' && req.dois !== undefined)
      return fault('BAD_REQUEST', `dois: only a subscription with "watch": "list" takes DOIs (this one: "${watch}")`);
    const short = req.prefixes?.findIndex((p) => p.length < 2) ?? -1;
    if (short >= 0)
      return fault('BAD_REQUEST', `prefixes[${short}]: at least 2 hex digits (a shorter one is a 16th of every work)`);
    const keys = req.dois ? this.doiKeys(req.dois) : [];
    if (!Array.isArray(keys)) return keys;
    const secret = newSecret();
    const s: Subscription = {
      id: `sub_${randomBytes(12).toString('hex')}`,
      integrator,
      url: req.url,
      types: req.types ? [...new Set(req.types)] : null,
      watch,
      prefixes: (req.prefixes ?? []).map((p) => p.toLowerCase()),
      secrets: [{ secret }],
      createdAt: this.now(),
      paused: null,
      watchCount: 0,
      delivered: 0,
      failing: null,
    };
    this.dbs.root.transactionSync(() => {
      this.dbs.subs.putSync(s.id, s);
      this.addKeys(s, keys);
    });
    return { view: this.view(s), secret };
  }

  list(integrator: string): SubscriptionView[] {
    return this.ownedBy(integrator).map((s) => this.view(s));
  }

  private ownedBy(integrator: string): Subscription[] {
    return allSubscriptions(this.dbs).filter((s) => s.integrator === integrator);
  }

  /** The subscription, when it is this integrator's (another's is as unknown as a missing one). */
  private own(integrator: string, id: string): Subscription | WebhookFault {
    const s = this.dbs.subs.get(id);
    return s && s.integrator === integrator ? s : this.gone(id);
  }

  show(integrator: string, id: string): SubscriptionView | WebhookFault {
    const s = this.own(integrator, id);
    return 'code' in s ? s : this.view(s);
  }

  /** Pauses (no delivery until resumed; events still gather) or resumes (a failing event is tried at once). */
  setPaused(integrator: string, id: string, paused: boolean): SubscriptionView | WebhookFault {
    const found = this.own(integrator, id);
    if ('code' in found) return found;
    const next = this.update(id, (s) => ({
      ...s,
      paused: paused ? (s.paused ?? { at: this.now(), reason: 'paused by its owner' }) : null,
      // a subscription resumed from a pause gets the full retry period again; a resume of one not paused changes
      // nothing (else calling it would stretch the retry period for ever)
      failing: !paused && s.paused && s.failing ? { ...s.failing, since: this.now(), nextAt: this.now() } : s.failing,
    }));
    if (!next) return this.gone(id);
    if (!paused) this.deliveries.wake([id]);
    return this.view(next);
  }

  /**
   * A new secret; the one it replaces signs beside it for ROTATION_OVERLAP_MS. A second rotation within that time
   * keeps the first old secret to its end too: the two most recent old ones, each until its own time.
   */
  rotateSecret(integrator: string, id: string): { view: SubscriptionView; secret: string } | WebhookFault {
    const found = this.own(integrator, id);
    if ('code' in found) return found;
    const secret = newSecret();
    const at = this.now();
    const next = this.update(id, (s) => {
      const stillValid = s.secrets.slice(1).filter((x) => x.until !== undefined && x.until > at);
      const old = [{ secret: s.secrets[0]!.secret, until: at + ROTATION_OVERLAP_MS }, ...stillValid].slice(0, 2);
      return { ...s, secrets: [{ secret }, ...old] };
    });
    return next ? { view: this.view(next), secret } : this.gone(id);
  }

  remove(integrator: string, id: string): true | WebhookFault {
    const s = this.own(integrator, id);
    if ('code' in s) return s;
    this.dbs.root.transactionSync(() => {
      this.dbs.subs.removeSync(id);
      const deleting = (this.dbs.meta.get('deleting') as string[] | undefined) ?? [];
      this.dbs.meta.putSync('deleting', [...deleting, id]);
    });
    this.deliveries.sweep();
    return true;
  }

  /** Adds (or removes) DOIs to a watch list: any form the APIs accept, letter case aside. */
  changeWatch(
    integrator: string,
    id: string,
    dois: string[],
    add: boolean,
  ): { watching: number; changed: number } | WebhookFault {
    const s = this.own(integrator, id);
    if ('code' in s) return s;
    if (s.watch !== 'list')
      return fault(
        'BAD_REQUEST',
        `this subscription watches ${s.watch === 'prefixes' ? 'hash prefixes' : 'everything'}, not a list of DOIs`,
      );
    const keys = this.doiKeys(dois);
    if (!Array.isArray(keys)) return keys;
    let changed = 0;
    let full = false;
    let gone = false;
    let watching = 0;
    this.dbs.root.transactionSync(() => {
      const fresh = this.dbs.subs.get(id);
      if (!fresh) {
        gone = true; // deleted since it was read above
        return;
      }
      watching = fresh.watchCount;
      if (add) {
        const adding = [...new Set(keys)].filter((k) => !this.dbs.watchBySub.doesExist(pair(id, k)));
        if (fresh.watchCount + adding.length > MAX_WATCHED) {
          full = true;
          return;
        }
        changed = this.addKeys(fresh, adding);
      } else
        for (const k of new Set(keys))
          if (this.dbs.watchBySub.doesExist(pair(id, k))) {
            this.dbs.watchBySub.removeSync(pair(id, k));
            this.dbs.watch.removeSync(pair(k, id));
            fresh.watchCount--;
            changed++;
          }
      this.dbs.subs.putSync(id, fresh);
      watching = fresh.watchCount;
    });
    if (full)
      return fault(
        'WATCH_LIST_FULL',
        `a subscription watches at most ${MAX_WATCHED.toLocaleString('en')} DOIs; it watches ${watching.toLocaleString('en')}`,
      );
    if (gone) return this.gone(id);
    return { watching, changed };
  }

  /** The last attempts, newest first. */
  attempts(integrator: string, id: string): Attempt[] | WebhookFault {
    const s = this.own(integrator, id);
    if ('code' in s) return s;
    return [
      ...this.dbs.attempts.getRange({ ...pairRange(id), reverse: true, start: `${id}\u0001`, end: `${id}\u0000` }),
    ].map(({ value }) => value);
  }

  /**
   * Queues again every event from `fromEvent` on that the subscription watches; how many. Each call is the
   * subscription's next replay n, its deliveries' webhook-ids `..._r<n>` (a receiver that saw the first ones takes
   * them).
   */
  replay(integrator: string, id: string, fromEvent: number): { queued: number; nextEvent?: number } | WebhookFault {
    const s = this.own(integrator, id);
    if ('code' in s) return s;
    const queued = requeue(this.dbs, s, fromEvent, this.options.replayEventsPerCall ?? MAX_REPLAY_EVENTS);
    this.deliveries.wake([id]);
    return queued;
  }

  /** For /metrics: every subscription's pending events and how far its oldest is behind the feed (s). */
  figures(): { id: string; integrator: string; paused: boolean; pending: number; lagSeconds: number }[] {
    const now = this.now();
    return allSubscriptions(this.dbs).map((s) => {
      const first = firstOutboxEntry(this.dbs, s.id)?.event;
      const at = first === undefined ? undefined : this.dbs.events.get(first)?.at;
      return {
        id: s.id,
        integrator: s.integrator,
        paused: s.paused !== null,
        pending: first === undefined ? 0 : this.pending(s.id),
        lagSeconds: at === undefined ? 0 : Math.max(0, (now - at) / 1000),
      };
    });
  }

  private pending(id: string): number {
    return this.dbs.outbox.getKeysCount(pairRange(id));
  }

  /**
   * Changes a subscription, read and written in one transaction: the delivery process writes the same row (what was
   * delivered, what fails). Undefined when it was deleted meanwhile.
   */
  private update(id: string, change: (s: Subscription) => Subscription): Subscription | undefined {
    return this.dbs.root.transactionSync(() => {
      const s = this.dbs.subs.get(id);
      if (!s) return undefined;
      const next = change(s);
      this.dbs.subs.putSync(id, next);
      return next;
    });
  }

  private gone(id: string): WebhookFault {
    return fault('NOT_FOUND', `no subscription ${JSON.stringify(id)} of yours`);
  }

  /** DOI keys of `dois` (at most MAX_DOIS_PER_CALL), or the first that is not a DOI. */
  private doiKeys(dois: string[]): string[] | WebhookFault {
    if (dois.length > MAX_DOIS_PER_CALL)
      return fault(
        'BAD_REQUEST',
        `dois: at most ${MAX_DOIS_PER_CALL} in one call (got ${dois.length}); send them in parts`,
      );
    const keys: string[] = [];
    for (const [i, d] of dois.entries()) {
      const input = readDoiInput(d);
      if (input.problem !== undefined)
        return fault('BAD_REQUEST', `dois[${i}]: ${JSON.stringify(d)}: ${input.problem}`);
      keys.push(input.key);
    }
    return keys;
  }

  /** Inside a transaction: the keys not yet watched, both ways round. */
  private addKeys(s: Subscription, keys: string[]): number {
    let added = 0;
    for (const k of keys) {
      if (this.dbs.watchBySub.doesExist(pair(s.id, k))) continue;
      this.dbs.watchBySub.putSync(pair(s.id, k), 1);
      this.dbs.watch.putSync(pair(k, s.id), 1);
      added++;
    }
    s.watchCount += added;
    this.dbs.subs.putSync(s.id, s);
    return added;
  }

  private view(s: Subscription): SubscriptionView {
    const old = s.secrets[1];
    return {
      id: s.id,
      url: s.url,
      types: s.types,
      watch: s.watch,
      ...(s.watch === 'prefixes' ? { prefixes: s.prefixes } : {}),
      ...(s.watch === 'list' ? { watching: s.watchCount } : {}),
      createdAt: iso(s.createdAt),
      paused: s.paused && { at: iso(s.paused.at), reason: s.paused.reason },
      deliveredThrough: s.delivered,
      pending: this.pending(s.id),
      failing: s.failing && {
        event: s.failing.event,
        since: iso(s.failing.since),
        attempts: s.failing.attempts,
        nextAttemptAt: iso(s.failing.nextAt),
        lastError: s.failing.lastError,
      },
      ...(old?.until !== undefined && old.until > this.now() ? { previousSecretValidUntil: iso(old.until) } : {}),
    };
  }
}
