import type { Fault } from '../base/index.ts';
import type { FileEntry, StoreWriteCode } from '../store/index.ts';

/** In-memory ingest counters for /metrics and /healthz (the ledger holds the durable reports). */
export class IngestStats {
  filesApplied = 0;
  quarantined = 0;
  conflicts = 0;
  retries = 0;
  queueDepth = 0;
  /** when a file was last finished, or the ingestor started (ms): files waiting from the start can be stuck too */
  lastProgressAt = Date.now();
  readonly records = { added: 0, updated: 0, removed: 0, unchanged: 0, noopRemovals: 0, overtaken: 0, rejected: 0 };
  applyMsTotal = 0;
  /** the newest LastModified (ms) of a file submitted, and of a file finished (applied, duplicate or quarantined) */
  newestSeen = 0;
  newestDone = 0;
  /** the oldest LastModified of a file submitted: what the lag counts from until a file is finished */
  private oldestSeen = 0;
  /** the last store write that failed for want of room, with the store's last apply number at that moment */
  private full: { code: 'STORE_FULL' | 'DISK_FULL'; message: string; seq: number } | undefined;

  /** A failed store write: a full map or filesystem is remembered until a file is applied again. */
  noteStoreFailure(f: Fault<StoreWriteCode>, seq: number): void {
    if (f.code !== 'APPLY_FAILED') this.full = { code: f.code, message: f.message, seq };
  }

  /**
   * The store is full while its last apply number is still the one of the failure: no file was applied since, by
   * this process or another (an operator's --retry). /healthz fails meanwhile.
   */
  storeFull(seq: number): { code: 'STORE_FULL' | 'DISK_FULL'; message: string } | undefined {
    return this.full && this.full.seq === seq ? this.full : undefined;
  }

  noteSeen(lastModified: number): void {
    if (lastModified > this.newestSeen) this.newestSeen = lastModified;
    if (this.oldestSeen === 0 || lastModified < this.oldestSeen) this.oldestSeen = lastModified;
  }

  noteDone(lastModified: number): void {
    if (lastModified > this.newestDone) this.newestDone = lastModified;
  }

  /**
   * Ingest lag: how far the newest file finished is behind the newest file in the bucket (their LastModified), in
   * seconds; 0 when nothing waits. It grows when ingestion stalls while publishers go on depositing.
   */
  lagSeconds(): number {
    if (this.queueDepth === 0) return 0;
    // before the first file is finished, the backlog's span (not the newest file's age since 1970)
    return Math.max(0, this.newestSeen - (this.newestDone || this.oldestSeen)) / 1000;
  }

  noteApplied(entry: FileEntry, ms: number): void {
    this.full = undefined;
    this.filesApplied++;
    this.applyMsTotal += ms;
    const c = entry.counts!;
    this.records.added += c.added;
    this.records.updated += c.updated;
    this.records.removed += c.removed;
    this.records.unchanged += c.unchanged;
    this.records.noopRemovals += c.noopRemovals;
    this.records.overtaken += c.overtaken ?? 0;
    this.records.rejected += c.rejected;
  }
}
