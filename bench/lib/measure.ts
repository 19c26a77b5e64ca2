/** Small helpers shared by the benchmarks: percentiles, a peak-memory sampler, number formatting. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Samples heap and RSS every few ms and on demand; keeps the peaks. */
export class PeakMemory {
  heapBytes = 0;
  rssBytes = 0;
  private readonly timer: ReturnType<typeof setInterval>;
  constructor(everyMs = 10) {
    this.timer = setInterval(() => this.sample(), everyMs);
  }
  sample(): void {
    const m = process.memoryUsage();
    if (m.heapUsed > this.heapBytes) this.heapBytes = m.heapUsed;
    if (m.rss > this.rssBytes) this.rssBytes = m.rss;
  }
  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const mib = (bytes: number) => `${fmt(bytes / 1048576, 0)} MiB`;
