/** A Prometheus histogram of call latencies (seconds): cumulative bucket counts, sum and count. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export class LatencyHistogram {
  /** counts per bucket (not cumulative); the last is +Inf */
  private readonly counts = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }

  /** [le, cumulative count] per bucket, ending with +Inf. */
  cumulative(): [string, number][] {
    let running = 0;
    return this.counts.map((n, i) => {
      running += n;
      return [i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : '+Inf', running];
    });
  }
}
