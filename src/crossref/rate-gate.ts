/**
 * Keeps calls within what the server advertises: `x-rate-limit-limit` calls per `x-rate-limit-interval`
 * (e.g. `50` per `1s`), and at most `x-concurrency-limit` at once. Until a reply has told us, one call at a
 * time and no spacing. Starts are spaced evenly (interval / limit, from the last real start), so no window of one
 * interval ever holds more than the limit. A 429 stops every start until its `Retry-After` has passed (`pauseFor`).
 *
 * The harvest waits as long as it takes; the metadata lookup waits only until its request's deadline (`enter`
 * with a deadline gives `undefined` then), and caps the advertised concurrency with its own setting.
 */
export class RateGate {
  /** the advertised figures, once known */
  limit: number | undefined;
  intervalMs: number | undefined;
  private advertised = 1;
  private inFlight = 0;
  private lastStartAt = -Infinity;
  /** no call starts before this (performance.now()), set by a 429's Retry-After */
  pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly waiting: (() => void)[] = [];

  /** `cap`: at most this many calls at once whatever the server advertises */
  constructor(private readonly cap = Number.POSITIVE_INFINITY) {}

  /** calls allowed in flight now: the advertised limit (1 until known), never above the cap */
  get concurrency(): number {
    return Math.min(this.advertised, this.cap);
  }

  /**
   * Waits for a free slot and the next start time; call the returned function when the call has finished.
   * With a `deadline` (performance.now() time), gives `undefined` instead once a start before it is impossible.
   */
  enter(): Promise<() => void>;
  enter(deadline: number): Promise<(() => void) | undefined>;
  async enter(deadline = Number.POSITIVE_INFINITY): Promise<(() => void) | undefined> {
    while (this.inFlight >= this.concurrency) if (!(await this.slotFreed(deadline))) return undefined;
    this.inFlight++;
    // spaced from the last start by what is known now (limits learnt since the last call count for it too)
    const now = performance.now();
    const startAt = Math.max(now, this.lastStartAt + this.spacingMs(), this.pausedUntil);
    if (startAt >= deadline) {
      this.leave();
      return undefined;
    }
    this.lastStartAt = startAt;
    if (startAt > now) {
      await Bun.sleep(startAt - now);
      // a busy thread wakes late: the next start is spaced from this one's real start, not its planned one, unless
      // another call has planned its start after this one meanwhile
      if (this.lastStartAt === startAt) this.lastStartAt = Math.max(startAt, performance.now());
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.leave();
    };
  }

  /** Resolves true when a slot may be free, false when the deadline came first. */
  private slotFreed(deadline: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const wait = deadline - performance.now();
      const timer =
        wait === Number.POSITIVE_INFINITY
          ? undefined
          : setTimeout(
              () => {
                const i = this.waiting.indexOf(wake);
                if (i >= 0) this.waiting.splice(i, 1);
                resolve(false);
              },
              Math.max(0, wait),
            );
      this.waiting.push(wake);
    });
  }

  private leave(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }

  /** Reads the limits a reply advertises (they may change at any time: Crossref revises them). */
  learn(headers: Headers): void {
    const limit = Number(headers.get('x-rate-limit-limit'));
    const interval = parseInterval(headers.get('x-rate-limit-interval'));
    const concurrency = Number(headers.get('x-concurrency-limit'));
    if (Number.isFinite(limit) && limit > 0) this.limit = limit;
    if (interval !== undefined) this.intervalMs = interval;
    if (Number.isInteger(concurrency) && concurrency > 0) {
      const before = this.concurrency;
      this.advertised = concurrency;
      // slots the new limit opens go to the calls waiting now, not one by one as calls end
      for (let n = this.concurrency - before; n > 0 && this.waiting.length > 0; n--) this.waiting.shift()!();
    }
  }

  /** A 429 asked us to wait: no call starts for `ms` (a later, shorter wait does not shorten it). */
  pauseFor(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + ms);
  }

  /** The time between two call starts, with 5% to spare: calls travel, and arrive closer together than they left. */
  spacingMs(): number {
    return this.limit && this.intervalMs ? (this.intervalMs / this.limit) * 1.05 : 0;
  }
}

/** `1s`, `500ms`, `1m`, or plain seconds, in ms. */
export function parseInterval(v: string | null): number | undefined {
  const m = v?.trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const ms = unit === 'ms' ? n : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n * 3600_000;
  return ms > 0 ? ms : undefined;
}
