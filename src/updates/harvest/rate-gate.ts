/**
 * Keeps calls within what the server advertises: `x-rate-limit-limit` calls per `x-rate-limit-interval`
 * (e.g. `50` per `1s`), and at most `x-concurrency-limit` at once. Until a reply has told us, one call at a
 * time and no spacing. Starts are spaced evenly (interval / limit), so no window of one interval ever holds
 * more than the limit.
 */
export class RateGate {
  /** the advertised figures, once known */
  limit: number | undefined;
  intervalMs: number | undefined;
  concurrency = 1;
  private inFlight = 0;
  private lastStartAt = -Infinity;
  private readonly waiting: (() => void)[] = [];

  /** Waits for a free slot and the next start time; call the returned function when the call has finished. */
  async enter(): Promise<() => void> {
    while (this.inFlight >= this.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    // spaced from the last start by what is known now (limits learnt since the last call count for it too)
    const now = performance.now();
    const startAt = Math.max(now, this.lastStartAt + this.spacingMs());
    this.lastStartAt = startAt;
    if (startAt > now) await Bun.sleep(startAt - now);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.waiting.shift()?.();
    };
  }

  /** Reads the limits a reply advertises (they may change at any time: Crossref revises them). */
  learn(headers: Headers): void {
    const limit = Number(headers.get('x-rate-limit-limit'));
    const interval = parseInterval(headers.get('x-rate-limit-interval'));
    const concurrency = Number(headers.get('x-concurrency-limit'));
    if (Number.isFinite(limit) && limit > 0) this.limit = limit;
    if (interval !== undefined) this.intervalMs = interval;
    if (Number.isInteger(concurrency) && concurrency > 0) this.concurrency = concurrency;
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
