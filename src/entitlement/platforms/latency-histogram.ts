/** A Prometheus histogram of call latencies (seconds): cumulative bucket counts, sum and count. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export class LatencyHistogram {
  /** counts per bucket (not cumulative); the last is +Inf */
  private readonly counts: number[];
  sum = 0;
  count = 0;

  /** `buckets`: the upper bounds in seconds, ascending (default LATENCY_BUCKETS, a platform call's) */
  constructor(private readonly buckets: readonly number[] = LATENCY_BUCKETS) {
    this.counts = new Array<number>(buckets.length + 1).fill(0);
  }

  observe(seconds: number): void {
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }

  /**
   * The q-quantile in seconds as Prometheus's histogram_quantile reads it: linear within the bucket it falls in;
   * in the +Inf bucket, the highest finite bound. Undefined before the first observation.
   */
  quantile(q: number): number | undefined {
    if (this.count === 0) return undefined;
    const rank = q * this.count;
    let below = 0;
    for (let i = 0; i < this.counts.length; i++) {
      const n = this.counts[i]!;
      if (below + n >= rank && n > 0) {
        if (i === this.buckets.length) return this.buckets[i - 1];
        const lower = i === 0 ? 0 : this.buckets[i - 1]!;
        return lower + (this.buckets[i]! - lower) * ((rank - below) / n);
      }
      below += n;
    }
    return this.buckets[this.buckets.length - 1];
  }

  /** [le, cumulative count] per bucket, ending with +Inf. */
  cumulative(): [string, number][] {
    let running = 0;
    return this.counts.map((n, i) => {
      running += n;
      return [i < this.buckets.length ? String(this.buckets[i]) : '+Inf', running];
    });
  }
}
