/**
 * A circuit breaker for one platform: after `failures` consecutive failed calls (errors, malformed answers,
 * time-outs) it opens, and for `cooldownMs` no call goes out (the answers are "as for a time-out", at once).
 * Then it lets one call through (the probe) to test recovery: its success closes the breaker, its failure opens
 * it for another cool-down. Calls that started before the breaker opened no longer count.
 */
type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * What allow() hands a call, and the call hands back with its outcome. `generation` counts the openings before the
 * call started: an outcome from an older generation than the breaker's is from before its last opening, and ignored.
 */
interface BreakerTicket {
  readonly probe: boolean;
  readonly generation: number;
}

export class CircuitBreaker {
  private consecutive = 0;
  private openedAt = 0;
  private opened = false;
  private probing = false;
  private generation = 0;
  /** the ticket of a call in this generation: one object, not one per call */
  private callTicket: BreakerTicket = { probe: false, generation: 0 };

  constructor(
    private readonly failures: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
    /** each time it opens (the platform's count, which outlives this breaker) */
    private readonly onOpen: () => void = () => undefined,
  ) {}

  get state(): BreakerState {
    if (!this.opened) return 'closed';
    return this.now() - this.openedAt >= this.cooldownMs ? 'half-open' : 'open';
  }

  /** A ticket when a call may go out now, else undefined. In half-open state only the probe, once. */
  allow(): BreakerTicket | undefined {
    const s = this.state;
    if (s === 'closed') return this.callTicket;
    if (s === 'open' || this.probing) return undefined;
    this.probing = true;
    return { probe: true, generation: this.generation };
  }

  success(ticket: BreakerTicket): void {
    if (ticket.generation !== this.generation) return;
    if (ticket.probe) {
      this.opened = false;
      this.probing = false;
    }
    this.consecutive = 0;
  }

  failure(ticket: BreakerTicket): void {
    if (ticket.generation !== this.generation) return;
    if (ticket.probe) {
      this.probing = false;
      this.open();
    } else if (++this.consecutive >= this.failures) this.open();
  }

  /** The call did not go out after all: a probe's turn passes to the next call. */
  cancel(ticket: BreakerTicket): void {
    if (ticket.probe && ticket.generation === this.generation) this.probing = false;
  }

  private open(): void {
    this.opened = true;
    // calls out now started before this opening: their outcomes no longer move the breaker
    this.generation++;
    this.callTicket = { probe: false, generation: this.generation };
    this.openedAt = this.now();
    this.onOpen();
  }
}
