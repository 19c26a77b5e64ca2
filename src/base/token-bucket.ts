/**
 * A token bucket: it holds up to `burst` tokens and gains `ratePerSecond` of them a second. The one limiter of the
 * program: an integrator's requests and DOIs, a platform's calls, a status-page reader's pages (docs/design.md,
 * "Rate limits"). The clock is passed in, in milliseconds, so that its tests are exact.
 */
export class TokenBucket {
  /**
   * When the bucket is full again (at or before now: full). Kept as a time rather than a level so that the
   * figures stay exact however often they are read; after now by more than the burst's worth while calls wait on
   * tokens lent ahead (reserve).
   */
  private fullAt: number;
  private lastNow: number;
  /** milliseconds a token takes to come */
  private readonly msPerToken: number;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly clock: () => number,
  ) {
    this.lastNow = clock();
    this.fullAt = this.lastNow;
    this.msPerToken = 1000 / ratePerSecond;
  }

  /** Milliseconds until `n` tokens are there (0: now); Infinity when `n` is more than the bucket ever holds. */
  waitMs(n: number): number {
    if (n > this.burst) return Infinity;
    return Math.max(0, this.fullAt - this.now() - (this.burst - n) * this.msPerToken);
  }

  /** Takes `n` tokens that waitMs(n) found there. */
  take(n: number): void {
    this.fullAt = Math.max(this.fullAt, this.now()) + n * this.msPerToken;
  }

  /**
   * Takes `n` tokens now or ahead of their arrival, when they come within `maxWaitMs`: the milliseconds to wait
   * before using them, or -1 (nothing taken) when they would come later. Those who reserve are served in order.
   */
  reserve(n: number, maxWaitMs: number): number {
    const wait = this.waitMs(n);
    if (wait > maxWaitMs) return -1;
    this.take(n);
    return wait;
  }

  /** Whole tokens there now. */
  available(): number {
    const missing = Math.max(0, this.fullAt - this.now()) / this.msPerToken;
    return Math.max(0, Math.floor(this.burst - missing));
  }

  /** Whether the bucket is full: one that is could be forgotten without anyone gaining by it. */
  full(): boolean {
    return this.fullAt <= this.now();
  }

  /** the clock, never read as going back: a step back neither adds nor takes tokens */
  private now(): number {
    const t = this.clock();
    if (t > this.lastNow) this.lastNow = t;
    return this.lastNow;
  }
}
