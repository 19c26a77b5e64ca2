import { basename, join } from 'node:path';
import { type Fault, FaultError, type FileFaultCode, fault, type Logger } from '../base/index.ts';
import { ByteWriter } from '../bytes/index.ts';
import { DEFAULT_INGEST, type EnvName } from '../config/index.ts';
import type { ApplyStatus, FileStatus, PreparedFile } from './apply/index.ts';
import {
  type AccessCounts,
  type AppliedFile,
  type AppliedListener,
  AppliedListeners,
  accessDelta,
  addLiveCounts,
  applyFilesRecords,
  conflictsOf,
  type FileInPass,
  liveCounts,
  liveCountsByAccess,
  recordConflict,
  recordsInPlace,
  syncLiveByAccess,
} from './apply/index.ts';
import type { SpaceUsage } from './environment/index.ts';
import {
  copyStore,
  dataFileOf,
  type FileReport,
  fileReport,
  META,
  markPlatformFiles,
  openEnvironment,
  type PageFigures,
  type PlatformFilesPage,
  pageFigures,
  platformFilesPage,
  putFileEntry,
  type SourceKind,
  type StoreDbs,
  spaceUsage,
  storeFileIn,
  syncPlatformFiles,
  writeTransaction,
} from './environment/index.ts';
import type { HoldingView, LiveHolding } from './holdings/index.ts';
import {
  decodeHolding,
  decodeLive,
  type HoldingFilter,
  holdingEntries,
  isLive,
  StoredHolding,
  splitHoldingKey,
} from './holdings/index.ts';
import {
  appliedEntry,
  type ConflictEntry,
  decidedVersion,
  decideFile,
  emptyCounts,
  type FileDecision,
  type FileEntry,
  type FileIdentity,
  quarantineEntry,
} from './ledger/index.ts';
import {
  adoptPass,
  beginPass,
  type PassRecord,
  passesFolder,
  passFolderName,
  processAlive,
  removeStaleRuns,
  runPass,
  SortedPassBuilder,
  standingPass,
} from './sorted-pass/index.ts';
import type { ReplaceMode, UpdatesEntry } from './updates/index.ts';
import {
  ChangeFeedView,
  DEFAULT_KEEP_MS,
  FeedImport,
  startChangeFeed,
  UpdatesIndex,
  workerTableBuilder,
} from './updates/index.ts';

/** How a sorted pass runs: chunk size, a hook after each chunk's commit (tests stop a pass there), and a stop asked between chunks. */
export interface SortedPassOptions {
  chunkRecords?: number;
  onChunk?: (progress: PassRecord) => void;
  stop?: () => boolean;
}

/**
 * The LMDB store of one environment: holdings with their history, the file ledger, update information. Its
 * sub-databases are its own; everything else goes through these methods.
 */
export class Store {
  private readonly out = new ByteWriter();
  private closed = false;
  private index: UpdatesIndex | undefined;
  private readonly applied = new AppliedListeners();
  readonly changeFeed: ChangeFeedView;
  /** told when an index read on the store's worker failed (it is then read on the request thread): the daemon logs it */
  onIndexReadFailed: (index: 'updates' | 'prefixes', error: string) => void = () => undefined;

  private constructor(
    readonly env: EnvName,
    readonly path: string,
    private readonly dbs: StoreDbs,
    /** how it was opened, for another thread or process that opens it too (changeFeedKeepMs: see change-feed.ts) */
    readonly opened: { dir: string; mapSizeBytes: number; changeFeedKeepMs: number },
    private readonly writable: boolean,
  ) {
    this.changeFeed = new ChangeFeedView(dbs, { path, mapSizeBytes: opened.mapSizeBytes }, (e) =>
      this.onIndexReadFailed('prefixes', e),
    );
  }

  static open(
    dir: string,
    env: EnvName,
    opts: { mapSizeBytes: number; readOnly?: boolean; changeFeedKeepMs?: number; log?: Logger },
  ): Store {
    const [path, keepMs] = [join(dir, env), opts.changeFeedKeepMs ?? DEFAULT_KEEP_MS];
    const dbs = openEnvironment(path, opts);
    if (!opts.readOnly) {
      // the access counters of a store from before them, or written by an older program since (live-counts.ts)
      const counted = syncLiveByAccess(dbs);
      // a new store counts nothing worth a line
      if (counted && counted.holdings > 0) opts.log?.log('info', 'store.access_counted', { env, ...counted });
      syncPlatformFiles(dbs); // the same for the platform index; last, its mark is this open's last commit
      startChangeFeed(dbs, Date.now(), keepMs);
    }
    return new Store(
      env,
      path,
      dbs,
      { dir, mapSizeBytes: opts.mapSizeBytes, changeFeedKeepMs: keepMs },
      !opts.readOnly,
    );
  }

  // --- the ledger ---

  /** What decideFile says of a file given the ledger as it is now (a read, no transaction): the ingestor's early check. */
  decide(file: FileIdentity, faulty: boolean, retry: boolean): FileDecision {
    return decideFile(this.dbs.files.get(file.key), { ...file, faulty }, retry);
  }

  /**
   * Applies files in order, all in ONE write transaction (a cold replica batches queued files): each file whole
   * with its ledger entry, or none of them after a crash. The decision is taken inside the transaction, so two
   * processes applying the same file cannot both apply it. A failed transaction commits nothing and throws a
   * StoreWriteError whose code says why (STORE_FULL, DISK_FULL, APPLY_FAILED: write-failure.ts).
   */
  async applyFiles(files: readonly PreparedFile[], now: () => Date = () => new Date()): Promise<ApplyStatus[]> {
    const told: AppliedFile[] = [];
    this.applied.pending++;
    try {
      const statuses = await this.write(() => {
        told.length = 0; // a transaction callback may be run again
        return this.applyInOnePass(files, now, told);
      });
      this.applied.tell(told);
      return statuses;
    } finally {
      this.applied.pending--;
    }
  }

  // --- sorted passes (docs/design.md, "A backlog in one sorted pass") ---

  /** Starts a sorted pass: the caller adds prepared files in apply order (spilled to sorted runs), then applySortedPass. */
  sortedPassBuilder(): SortedPassBuilder {
    const standing = this.dbs.meta.get(META.sortedPass) as PassRecord | undefined;
    removeStaleRuns(this.path, standing && basename(standing.dir), this.building, processAlive);
    const id = passFolderName(Date.now());
    this.building.add(id);
    return new SortedPassBuilder(this.dbs, id, join(passesFolder(this.path), id), () => this.building.delete(id));
  }
  /** the folders of sorted passes this store is spilling now */
  private readonly building = new Set<string>();

  /**
   * Applies a built sorted pass: the files' records in key order, committed in chunks (the holdings of a key
   * below the pass's progress already show every file of it; the ledger, sequence numbers and live counts land at
   * the end, together). The files' statuses, or undefined when a file no longer joins the pass (another process
   * decided it meanwhile): nothing was written and the caller applies the files the usual way. Read models are
   * not told of the files one by one: the apply sequence moves at the end, as when another process writes, and
   * they read the store again.
   */
  async applySortedPass(b: SortedPassBuilder, opts: SortedPassOptions = {}): Promise<FileStatus[] | undefined> {
    this.applied.pending++;
    try {
      const record = await beginPass(this.dbs, b);
      if (!record) {
        b.discard();
        return undefined;
      }
      return await runPass(this.dbs, record, passRun(opts));
    } finally {
      this.applied.pending--;
    }
  }

  /** A sorted pass stands unfinished: run by a live process (`elsewhere`: wait), or left by one that died (`abandoned`: resume it). */
  standingPass(): 'none' | 'elsewhere' | 'abandoned' {
    return standingPass(this.dbs);
  }

  /** Finishes a sorted pass whose process died, from its last committed chunk; the statuses of its files. */
  async resumeSortedPass(opts: SortedPassOptions = {}): Promise<FileStatus[]> {
    this.applied.pending++;
    try {
      const record = await adoptPass(this.dbs);
      if (!record) return []; // another process took it over, or it ended
      return await runPass(this.dbs, record, passRun(opts));
    } finally {
      this.applied.pending--;
    }
  }

  /** Synchronous variant (tests): commits before returning. */
  applyFilesSync(files: readonly PreparedFile[], now: () => Date = () => new Date()): ApplyStatus[] {
    const told: AppliedFile[] = [];
    const statuses = this.dbs.root.transactionSync(() => this.applyInOnePass(files, now, told));
    this.applied.tell(told);
    return statuses;
  }

  /**
   * Calls `listener` after every commit of applied files by this process (applied-files.ts); returns the
   * unsubscribe function. Files applied by another process are not told: compare appliedSeq().
   */
  onApplied(listener: AppliedListener): () => void {
    return this.applied.add(listener);
  }

  /** The last apply sequence number committed by any process, and whether this process has commits not yet told. */
  appliedSeq(): { seq: number; pending: boolean } {
    return {
      seq: ((this.dbs.meta.get(META.nextSeq) as number | undefined) ?? 1) - 1,
      pending: this.applied.pending > 0,
    };
  }

  /**
   * What the current read snapshot holds: the last apply sequence number and the update imports' generation
   * (both moved by any process), and whether this process has commits not yet told. Read models cached over
   * the store compare it to know whether they may serve.
   */
  changeStamp(): { seq: number; updatesGen: number; pending: boolean } {
    return { ...this.appliedSeq(), updatesGen: (this.dbs.meta.get(META.updatesGen) as number | undefined) ?? 0 };
  }

  /**
   * Records a file that cannot be applied (a file-level fault, a path fault, or retries exhausted), unless the
   * ledger already decided this content (duplicate) or the key was applied with other content (conflict). It is a
   * write too: on a full store it throws a StoreWriteError, and the caller keeps the file to record later.
   */
  async quarantineFile(
    file: FileIdentity & { platform?: string },
    f: Fault<FileFaultCode>,
    opts: { tries: number; retry?: boolean; now?: () => Date },
  ): Promise<FileStatus> {
    const now = opts.now ?? (() => new Date());
    return this.write((): FileStatus => {
      const existing = this.dbs.files.get(file.key);
      const decision = decideFile(existing, { ...file, faulty: true }, opts.retry ?? false);
      if (decision === 'duplicate') return { status: 'duplicate', entry: existing! };
      if (decision === 'conflict')
        return { status: 'conflict', conflict: recordConflict(this.dbs, file, existing!, now), entry: existing! };
      if (decision === 'unreadable')
        return {
          status: 'unreadable',
          entry: existing!,
          fault: fault(f.code, `${f.message}; the applied file of this key is kept`),
        };
      const entry = quarantineEntry(file, f, opts.tries, now().toISOString());
      putFileEntry(this.dbs, entry);
      return { status: 'quarantined', entry };
    });
  }

  /**
   * Applies files in order inside the caller's transaction: each file's decision, place in the apply order and
   * sequence number in turn; then the records of every file to apply in one pass in key order (applyFilesRecords:
   * the same holdings, events and counts as one file after another); then each file's counters and ledger entry.
   * A file's applyMs is its share, by records, of the pass.
   */
  private applyInOnePass(files: readonly PreparedFile[], now: () => Date, told: AppliedFile[]): ApplyStatus[] {
    // a sorted pass holds the holdings until it ends (its chunks and sequence numbers are its own)
    if (this.dbs.meta.get(META.sortedPass) !== undefined)
      throw new Error(`a sorted pass is applying a backlog to ${this.path}: files apply after it ends`);
    const seqBefore = (this.dbs.meta.get(META.nextSeq) as number | undefined) ?? 1;
    const placed = files.map((f) => this.placeFile(f, now));
    const pass = placed.filter((p): p is FileInPass => !('status' in p));
    const t0 = performance.now();
    applyFilesRecords(this.dbs.holdings, pass, this.out);
    const ms = performance.now() - t0;
    const records = pass.reduce((n, p) => n + p.records.count, 0);
    const statuses = placed.map((p, i): ApplyStatus => {
      if ('status' in p) return p;
      const [f, { fileSeq: seq, counts }] = [files[i]!, p];
      if (this.applied.active) told.push({ seq, platform: f.platform, records: p.records });
      const share = records === 0 ? ms / pass.length : (ms * p.records.count) / records;
      const entry = appliedEntry(f, seq, counts, Math.round(share * 10) / 10, now().toISOString());
      putFileEntry(this.dbs, entry);
      return { status: 'applied', entry };
    });
    const moves = placed.flatMap((p, i) =>
      'status' in p
        ? []
        : [{ platform: files[i]!.platform, live: p.counts.added - p.counts.removed, access: p.access }],
    );
    addLiveCounts(this.dbs, moves, seqBefore);
    return statuses;
  }

  /** A file's decision and place in the apply order: its status when it is not applied now, else its records to apply and its sequence number. */
  private placeFile(f: PreparedFile, now: () => Date): ApplyStatus | FileInPass {
    const { files, fileSeqs, meta } = this.dbs;
    const existing = files.get(f.key);
    const decision = decideFile(
      existing,
      { hash: f.hash, size: f.size, lastModified: f.lastModified, faulty: false },
      f.retry ?? false,
    );
    if (decision === 'duplicate') return { status: 'duplicate', entry: existing! };
    if (decision === 'conflict')
      return { status: 'conflict', conflict: recordConflict(this.dbs, f, existing!, now), entry: existing! };
    if (decision !== 'apply') throw new Error(`${f.key}: a prepared file decided as ${decision}`); // a read file is never unread or faulty
    const inPlace = recordsInPlace(this.dbs, f);
    if ('late' in inPlace) return { status: 'late', file: f, later: inPlace.late };
    const seq: number = (meta.get(META.nextSeq) as number | undefined) ?? 1;
    meta.putSync(META.nextSeq, seq + 1);
    fileSeqs.putSync(seq, f.key);
    const { records, overtaken } = inPlace;
    const counts = overtaken > 0 ? { ...emptyCounts(f.parsed), overtaken } : emptyCounts(f.parsed);
    return { records, time: f.lastModified, fileSeq: seq, counts, access: accessDelta() };
  }

  fileEntry(key: string): FileEntry | undefined {
    return this.dbs.files.get(key);
  }

  /** This version of a file (size, LastModified) was decided: its ledger entry (seenBefore), or a conflict's. */
  decidedBefore(key: string, stat: { size: number; lastModified: number }): boolean {
    return decidedVersion(this.dbs.files.get(key), this.conflictsOf(key), stat);
  }

  /** The same-key conflicts recorded for `key`. */
  conflictsOf(key: string): ConflictEntry[] {
    return conflictsOf(this.dbs, key);
  }

  fileKeyOfSeq(seq: number): string | undefined {
    return this.dbs.fileSeqs.get(seq);
  }

  /**
   * Applied files by apply sequence number, newest first, down to the one after `after` (the console's latest files
   * and files per day: a range read of `fileSeqs`, never of the whole ledger).
   */
  *appliedNewestFirst(after = 0): Generator<{ seq: number; key: string }> {
    for (const { key, value } of this.dbs.fileSeqs.getRange({ reverse: true, end: after }))
      yield { seq: key, key: value };
  }

  /** A page of one platform's files, newest first (platform-files.ts); undefined when `after` is not its file. */
  platformFiles(platform: string, limit: number, after?: string): PlatformFilesPage | undefined {
    return platformFilesPage(this.dbs, platform, limit, after);
  }

  /** A file's report (fileReport): its ledger entry and conflicts; undefined when the ledger does not hold it. */
  fileReport(key: string): FileReport | undefined {
    const entry = this.dbs.files.get(key);
    return entry && fileReport(entry, this.env, this.conflictsOf(key));
  }

  // --- reports due to the bucket (bucket/s3/report-writer.ts: its ReportSource) ---

  /** The first file (in key order) whose report is due to its bucket: decided since its report was last written. */
  nextReportDue(): string | undefined {
    for (const key of this.dbs.reportsDue.getKeys({ limit: 1 })) return key;
    return undefined;
  }

  reportsDueCount(): number {
    return (this.dbs.reportsDue.getStats() as { entryCount: number }).entryCount;
  }

  /** A file's report as the bucket gets it (JSON text), read now; undefined when the ledger does not hold the file. */
  reportText(key: string): string | undefined {
    const report = this.fileReport(key);
    return report && JSON.stringify(report);
  }

  /**
   * `sent` was written to the bucket: the file's report is no longer due, unless it changed meanwhile (a new
   * outcome, a conflict recorded), which stays due and is written again.
   */
  async reportWritten(key: string, sent: string): Promise<void> {
    await this.write(() => {
      if (this.reportText(key) === sent || !this.dbs.files.get(key)) this.dbs.reportsDue.removeSync(key);
    });
  }

  /** Nothing is due (reports are off for this bucket): the marks are not kept for a writer that will not come. */
  async clearReportsDue(): Promise<void> {
    if (this.reportsDueCount() > 0) await this.write(() => void this.dbs.reportsDue.clearSync());
  }

  *ledger(): Generator<FileEntry> {
    for (const { value } of this.dbs.files.getRange()) yield value;
  }

  *failures(): Generator<{ kind: 'quarantined'; entry: FileEntry } | { kind: 'conflict'; conflict: ConflictEntry }> {
    for (const { value } of this.dbs.files.getRange())
      if (value.outcome === 'quarantined') yield { kind: 'quarantined', entry: value };
    for (const { value } of this.dbs.conflicts.getRange()) yield { kind: 'conflict', conflict: value };
  }

  // --- holdings ---

  /** Every platform's holding of one DOI, tombstones included (their history outlives them). One range read. */
  holdingsOf(doiKey: string): HoldingView[] {
    return [...this.holdingHistories({ doiKey })];
  }

  /** Holdings with their histories in store order, tombstones included, optionally of one platform or DOI key. */
  *holdingHistories(filter: HoldingFilter = {}): Generator<HoldingView> {
    for (const { doiKey, platform, value } of this.holdingValues(filter))
      yield { doiKey, platform, ...decodeHolding(doiKey, value) };
  }

  /** Live holdings in store order (DOI key, then platform), optionally of one platform or one DOI key. */
  *liveHoldings(filter: HoldingFilter = {}): Generator<LiveHolding> {
    for (const { doiKey, platform, value } of this.holdingValues(filter))
      if (isLive(value)) yield { doiKey, platform, ...decodeLive(doiKey, value) };
  }

  /** Live holdings in store order read in place, for the fast paths (holding-json.ts): one reader, moved along. */
  *storedHoldings(filter: HoldingFilter = {}): Generator<StoredHolding> {
    const h = new StoredHolding();
    for (const { key, value } of holdingEntries(this.dbs.holdings, filter)) if (h.read(key, value)) yield h;
  }

  /** The stored values in store order, with their keys split. */
  private *holdingValues(filter: HoldingFilter): Generator<{ doiKey: string; platform: string; value: Uint8Array }> {
    for (const { key, value } of holdingEntries(this.dbs.holdings, filter)) yield { ...splitHoldingKey(key), value };
  }

  /** Live holdings per platform: the store's counters (live-counts.ts), no scan. */
  liveCounts(): Record<string, number> {
    return liveCounts(this.dbs);
  }

  /**
   * Live holdings per platform and access type: the store's counters, no scan. Undefined when they do not agree
   * with the holdings yet (a read-only open of a store no writable open of this program has counted, or one an
   * older program wrote since): the next writable open counts them.
   */
  liveCountsByAccess(): Record<string, AccessCounts> | undefined {
    return liveCountsByAccess(this.dbs);
  }

  // --- update information ---

  /** Starts a bounded-memory import of one feed (feed-import.ts); `now` dates it (stale imports are cleared). */
  beginUpdatesImport(
    origin: string,
    mode: ReplaceMode,
    now = Date.now(),
    resume?: { id: string; rows: number },
  ): FeedImport {
    return new FeedImport(this.dbs, origin, mode, now, resume, this.opened.changeFeedKeepMs);
  }

  updatesOf(doiKey: string): UpdatesEntry | undefined {
    return this.dbs.updates.get(doiKey) as UpdatesEntry | undefined;
  }

  /** The in-memory read index the Updates API answers from (one per store, built on first use; slow reloads on a worker). */
  get updatesIndex(): UpdatesIndex {
    const where = { path: this.path, mapSizeBytes: this.opened.mapSizeBytes };
    return (this.index ??= new UpdatesIndex(this.dbs, {
      builder: workerTableBuilder(),
      where,
      onFailed: (e) => this.onIndexReadFailed('updates', e),
    }));
  }

  /** Rows of update imports that have not committed (in progress, or left by one that died). */
  importScratchRows(): number {
    return this.dbs.importScratch.getKeysCount();
  }

  /** What the daemon remembers of an update source it follows (sourceState in META). */
  sourceState<T>(kind: SourceKind, id: string): T | undefined {
    return this.dbs.meta.get(META.sourceState(kind, id)) as T | undefined;
  }

  /** Saves `state`; with `refuse`, only when it says nothing, given the state as saved (in the same transaction). */
  async saveSourceState<T extends object, R = never>(
    kind: SourceKind,
    id: string,
    state: T,
    refuse?: (saved: T | undefined) => R | undefined,
  ): Promise<R | undefined> {
    const key = META.sourceState(kind, id);
    return this.write(
      () => refuse?.(this.dbs.meta.get(key) as T | undefined) ?? void this.dbs.meta.putSync(key, state),
    );
  }

  /** One write transaction, all or nothing; a failure is a StoreWriteError (write-failure.ts). */
  private write<T>(fn: () => T): Promise<T> {
    return writeTransaction(this.dbs, fn);
  }

  // --- the file itself ---

  spaceUsage(): SpaceUsage {
    return spaceUsage(this.dbs);
  }

  /** The store layout version this file carries (environment.ts, SCHEMA_VERSION). */
  schemaVersion(): number {
    return this.dbs.meta.get(META.schemaVersion) as number;
  }

  conflictCount(): number {
    return this.dbs.conflicts.getCount();
  }

  /** The file's size and page figures (free pages among them). */
  pageFigures(): PageFigures {
    return pageFigures(this.dbs, dataFileOf(this.path));
  }

  /** A consistent compacted copy of this store as `<dir>/<env>/data.mdb` (store-file.ts); the daemon may run meanwhile. */
  async backupTo(dir: string): Promise<string> {
    // a copy taken mid-pass would hold a pass whose runs it lacks: it could never end
    const pass = this.dbs.meta.get(META.sortedPass) as PassRecord | undefined;
    if (pass)
      throw new FaultError(
        fault(
          'BACKUP_FAILED',
          `a sorted pass is applying a backlog to ${this.path} (${pass.applied} of ${pass.records} records): back up once it ends (its pass.committed line)`,
        ),
      );
    const target = storeFileIn(dir, this.env);
    await copyStore(this.dbs, target);
    return target;
  }

  /** Waits for pending async writes (and their flush) to finish. */
  async flushed(): Promise<void> {
    await this.dbs.root.flushed;
  }

  /** false once close() began: /readyz asks */
  get isOpen(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.index?.close();
    this.changeFeed.close();
    if (this.writable)
      try {
        markPlatformFiles(this.dbs); // the next open need not read the ledger through (platform-files.ts)
      } catch {
        // a full store or disk: the next open checks the index, as after a crash
      }
    await this.dbs.root.close();
  }
}

/** How a sorted pass runs, begun or resumed: its chunk size (the configured one unless the caller says), its hooks. */
function passRun(opts: SortedPassOptions) {
  return { chunkRecords: opts.chunkRecords ?? DEFAULT_INGEST.passChunkRecords, onChunk: opts.onChunk, stop: opts.stop };
}
