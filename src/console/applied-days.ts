import type { Store } from '../store/index.ts';

/** Days the console's chart shows, today included. */
export const CHART_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * Files applied per day (UTC, by the ledger's `recordedAt`) over the last CHART_DAYS days, kept in memory and moved
 * on from the apply sequence numbers: a view reads only the files applied since the last view (a range read of
 * `fileSeqs`, newest first), and the first view of a process reads back to the first day shown. So no view reads
 * the whole ledger, and the store keeps nothing more for it. Files applied by another process (`--ingest`) take
 * numbers too, so they are counted as well.
 */
export class AppliedDays {
  /** the highest apply sequence number counted */
  private counted = 0;
  private readonly perDay = new Map<string, number>();

  constructor(private readonly store: Store) {}

  /** Files applied per day, oldest day first, ending with the day of `now`. */
  days(now: number): { day: string; files: number }[] {
    this.catchUp(now);
    const out: { day: string; files: number }[] = [];
    for (let i = CHART_DAYS - 1; i >= 0; i--) {
      const day = dayOf(now - i * DAY_MS);
      out.push({ day, files: this.perDay.get(day) ?? 0 });
    }
    return out;
  }

  private catchUp(now: number): void {
    const { seq } = this.store.appliedSeq();
    // fewer files than counted: another store file in its place (a restore); count it afresh
    if (seq < this.counted) {
      this.counted = 0;
      this.perDay.clear();
    }
    const first = dayOf(now - (CHART_DAYS - 1) * DAY_MS);
    for (const { key } of this.store.appliedNewestFirst(this.counted)) {
      const at = this.store.fileEntry(key)?.recordedAt;
      if (at === undefined) continue;
      const day = at.slice(0, 10);
      // numbers follow the apply order, so the files before this one were recorded no later
      if (day < first) break;
      this.perDay.set(day, (this.perDay.get(day) ?? 0) + 1);
    }
    this.counted = Math.max(this.counted, seq);
    for (const day of this.perDay.keys()) if (day < first) this.perDay.delete(day);
  }
}

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
