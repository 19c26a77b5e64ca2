/**
 * A circuit breaker for one platform: after `failures` consecutive failed calls (errors, malformed answers,
 * time-outs) it opens, and for `cooldownMs` no call goes out (the answers are "as for a time-out", at once).
 * Then it lets one call through to test recovery: success closes it, failure opens it for another cool-down.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export class CircuitBreaker {
  private consecutive = 0;
  private openedAt = 0;
  private opened = false;
  private probing = false;
  /** times it opened, for metrics */
  opens = 0;

  constructor(
    private readonly failures: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
  ) {}

  get state(): BreakerState {
    if (!this.opened) return 'closed';
    return this.now() - this.openedAt >= this.cooldownMs ? 'half-open' : 'open';
  }

  /** May a call go out now? In half-open state only one (the probe) until it reports. */
  allow(): boolean {
    const s = this.state;
    if (s === 'closed') return true;
    if (s === 'open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  success(): void {
    this.consecutive = 0;
    this.opened = false;
    this.probing = false;
  }

  failure(): void {
    this.consecutive++;
    if (this.probing || (!this.opened && this.consecutive >= this.failures)) {
      if (!this.opened || this.probing) this.opens++;
      this.opened = true;
      this.openedAt = this.now();
    }
    this.probing = false;
  }
}
