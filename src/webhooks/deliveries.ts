import { signedHeaders } from './signing.ts';
import {
  ATTEMPTS_KEPT,
  type Attempt,
  type FeedEvent,
  firstOutboxEntry,
  OUTBOX_FROM_FEED,
  outboxKey,
  pair,
  type Subscription,
  seqText,
  type WebhookDbs,
} from './subscriptions-db.ts';
import { type DeliveryOutcome, type SendOutcome, send, type TargetRules } from './target.ts';

export interface DeliverySettings extends TargetRules {
  concurrency: number;
  /** in flight at once for one integrator: its slow receivers cannot take every slot from the others */
  perIntegratorConcurrency: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  retryForMs: number;
  /** CA certificates (PEM) trusted beside the system's, for a test's own https receiver; never from the config */
  ca?: string;
}

/**
 * `msg_<subscription>_<event>`, the same on every retry; a replay's `..._r<n>`, so that a receiver deduplicating
 * by webhook-id takes the replay it asked for.
 */
export function webhookIdOf(subscription: string, event: number, entry: number): string {
  return entry > OUTBOX_FROM_FEED
    ? `msg_${subscription}_${event}_r${entry - OUTBOX_FROM_FEED}`
    : `msg_${subscription}_${event}`;
}

export type { DeliveryOutcome } from './target.ts';

/**
 * The wait before a failed delivery's next attempt: base × 2^(attempt−1), at most retryMaxMs, drawn from its upper
 * half by `random` (0 to 1) so that receivers back up apart.
 */
export function backoffMs(
  attempts: number,
  settings: Pick<DeliverySettings, 'retryBaseMs' | 'retryMaxMs'>,
  random: number,
): number {
  const full = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(full / 2 + (random * full) / 2);
}

/**
 * Sends each subscription's events in order, one in flight per subscription, at most `perIntegratorConcurrency`
 * per integrator and `concurrency` in all (docs/design.md, "Push alerts"). An event leaves a subscription's outbox,
 * and its position moves, only in the transaction that records the receiver's 2xx: a crash before it sends the
 * event again (at least once, with the same `webhook-id`). A failure is tried again after an exponential backoff
 * with jitter; one failing for `retryForMs` pauses its subscription with the reason. A slow receiver holds only its
 * own subscription and one of its integrator's slots: another integrator's deliveries go on. A subscription is read
 * from the store each time it is looked at: its owner changes it from the daemon's process (a pause, a new secret).
 */
export class Deliveries {
  /** subscriptions that may have an event to send now */
  private readonly ready = new Set<string>();
  private readonly inFlight = new Set<string>();
  /** deliveries in flight per integrator */
  private readonly byIntegrator = new Map<string, number>();
  private readonly timers = new Map<string, Timer>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  readonly outcomes = new Map<DeliveryOutcome, number>();

  constructor(
    private readonly dbs: WebhookDbs,
    private readonly settings: DeliverySettings,
    private readonly now: () => number,
    private readonly random: () => number = Math.random,
    private readonly onPaused: (s: Subscription) => void = () => undefined,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  /** Look again at these subscriptions (new events, a resume, a replay), then start what may start. */
  wake(ids: Iterable<string>): void {
    for (const id of ids) this.ready.add(id);
    this.pump();
  }

  private pump(): void {
    if (this.closed) return;
    for (const id of this.ready) {
      if (this.inFlight.size >= this.settings.concurrency) return;
      const s = this.dbs.subs.get(id);
      // its integrator's share is taken: it stays ready, and the next end of one of theirs pumps again
      if (s && (this.byIntegrator.get(s.integrator) ?? 0) >= this.settings.perIntegratorConcurrency) continue;
      this.ready.delete(id);
      if (!s || s.paused || this.inFlight.has(id)) continue;
      const wait = s.failing ? s.failing.nextAt - this.now() : 0;
      if (wait > 0) {
        this.later(id, wait);
        continue;
      }
      const next = firstOutboxEntry(this.dbs, id);
      if (next === undefined) continue;
      this.inFlight.add(id);
      const who = s.integrator;
      this.byIntegrator.set(who, (this.byIntegrator.get(who) ?? 0) + 1);
      const run = this.deliver(s, next)
        .then(
          () => {
            this.ready.add(id);
          },
          // a store that cannot be written (a full disk): nothing recorded, the event stays first; tried again later
          (e: unknown) => {
            this.onError(e);
            this.later(id, this.settings.retryBaseMs);
          },
        )
        .finally(() => {
          this.inFlight.delete(id);
          const n = (this.byIntegrator.get(who) ?? 1) - 1;
          if (n > 0) this.byIntegrator.set(who, n);
          else this.byIntegrator.delete(who);
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }

  private later(id: string, ms: number): void {
    if (this.timers.has(id)) return;
    this.timers.set(
      id,
      setTimeout(() => {
        this.timers.delete(id);
        this.wake([id]);
      }, ms),
    );
  }

  private async deliver(s: Subscription, { event, entry }: { event: number; entry: number }): Promise<void> {
    const e = this.dbs.events.get(event) as FeedEvent | undefined;
    const webhookId = webhookIdOf(s.id, event, entry);
    let outcome: SendOutcome;
    if (!e) outcome = { kind: 'not_kept', ok: false, status: 0, error: `event ${event} is no longer kept`, ms: 0 };
    else {
      const body = `{"type":"updates.changed","doi":${JSON.stringify(e.doi)},"updates":${e.updates},"previous":${e.previous}}`;
      const at = this.now();
      const secrets = s.secrets.filter((x) => x.until === undefined || x.until > at).map((x) => x.secret);
      const headers = signedHeaders(secrets, webhookId, Math.floor(at / 1000), body);
      outcome = await send(s.url, headers, body, this.settings);
    }
    this.count(outcome);
    await this.record(s.id, event, entry, webhookId, outcome, e === undefined);
  }

  private count(o: SendOutcome): void {
    this.outcomes.set(o.kind, (this.outcomes.get(o.kind) ?? 0) + 1);
  }

  /**
   * The attempt and its consequence, in one transaction: the position moves only with a 2xx. Asynchronous, so that
   * lmdb-js commits the answers that arrive together as one synced commit (one commit per delivery capped them at
   * about 270 a second); the subscription's next delivery starts only once it is on disk.
   */
  private async record(
    id: string,
    event: number,
    entry: number,
    webhookId: string,
    o: SendOutcome,
    gone: boolean,
  ): Promise<void> {
    const at = this.now();
    let paused: Subscription | undefined;
    await this.dbs.root.transaction(() => {
      const s = this.dbs.subs.get(id);
      if (!s) return; // deleted meanwhile
      const n = (this.dbs.meta.get(`attempts:${id}`) as number | undefined) ?? 0;
      this.dbs.attempts.putSync(pair(id, seqText(n + 1)), {
        event,
        webhookId,
        at,
        status: o.status,
        ok: o.ok,
        outcome: o.kind,
        ...(o.error === undefined ? {} : { error: o.error }),
        ms: o.ms,
      } satisfies Attempt);
      if (n + 1 > ATTEMPTS_KEPT) this.dbs.attempts.removeSync(pair(id, seqText(n + 1 - ATTEMPTS_KEPT)));
      this.dbs.meta.putSync(`attempts:${id}`, n + 1);
      if (o.ok || gone) {
        // an event no longer kept cannot be sent: it is passed over, as its attempt says. A replay that queued it
        // again while this one was in flight left another value: that entry stays, to be sent with its own id
        if (this.dbs.outbox.get(outboxKey(id, event)) === entry) this.dbs.outbox.removeSync(outboxKey(id, event));
        s.delivered = Math.max(s.delivered, event);
        s.failing = null;
      } else {
        const f = s.failing?.event === event ? s.failing : { event, since: at, attempts: 0, nextAt: at, lastError: '' };
        f.attempts++;
        f.lastError = o.error ?? `status ${o.status}`;
        f.nextAt = at + backoffMs(f.attempts, this.settings, this.random());
        s.failing = f;
        if (at - f.since >= this.settings.retryForMs) {
          s.paused = {
            at,
            reason: `event ${event} failed for ${Math.round((at - f.since) / 60_000)} minutes (${f.attempts} attempts); last: ${f.lastError}`,
          };
          paused = s;
        }
      }
      this.dbs.subs.putSync(id, s);
    });
    if (paused) this.onPaused(paused);
  }

  /** Stops starting deliveries and waits for those in flight (each ends within its time-out). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  get active(): number {
    return this.inFlight.size;
  }
}
