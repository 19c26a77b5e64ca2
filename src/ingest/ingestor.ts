import type { Level } from '../base/index.ts';
import { type Fault, type FileFaultCode, fault, RECOVERABLE_FILE_FAULTS } from '../base/index.ts';
import { type FileStat, statBucketFile } from '../bucket/index.ts';
import { applyOrder, isHiddenOrTemp, keyLengthProblem, undecodableNameFault } from '../deposit/index.ts';
import {
  type ApplyStatus,
  type FileEntry,
  type FileIdentity,
  type FileStatus,
  type PreparedFile,
  type SortedPassBuilder,
  type SortedPassOptions,
  seenBefore,
  storeWriteFault,
  UNREAD_HASH,
} from '../store/index.ts';
import { type FilePreparer, PreparerPool, WorkerPreparer } from './file-preparer.ts';
import type { IngestorOptions } from './ingestor-options.ts';
import { countAndLog, type IngestOutcome } from './outcomes.ts';
import { type FileOrder, heldBack, type Pending, retryDelayMs, tried, untried, versionOf } from './pending.ts';
import type { PrepareReply } from './prepare-messages.ts';
import { readFault } from './read-bucket-file.ts';
import { type ReadBackAt, readLaterFiles } from './read-later-files.ts';
import { IngestStats } from './stats.ts';

/**
 * Files waiting (the daemon behind) apply in passes of many files, one transaction each, their records written in
 * key order (store.applyFiles; docs/design.md, "A backlog in one pass"): at most `ingest.passFiles` files (default
 * 100). A pass holds its files' encoded records in memory (about 100 bytes a record), so it is bounded by their
 * size in the bucket too. A backlog of `ingest.sortedPassFiles` files or more (a first load, a cold replica, a
 * restore catching up) is one sorted pass instead (sortedPass, below).
 */
const PASS_BYTES = 64 * 1024 * 1024;
/** records a sorted pass's run holds at most (about 100 MB of them in memory while it is merged) */
const RUN_RECORDS = 1_000_000;
/** how long the ingestor waits before it looks again at a sorted pass another process runs */
const PASS_WAIT_MS = 1000;

/** The first files of `ready` (in apply order) that go in one pass: at least one, within both bounds. */
export function backlogBatch<T extends { size: number }>(ready: readonly T[], maxFiles: number): T[] {
  let bytes = 0;
  let n = 0;
  while (n < ready.length && n < maxFiles && (n === 0 || bytes + ready[n]!.size <= PASS_BYTES))
    bytes += ready[n++]!.size;
  return ready.slice(0, n);
}

export type { IngestorOptions } from './ingestor-options.ts';
export type { IngestOutcome };

/**
 * Applies bucket files in (LastModified, key) order, one file whole per ledger entry; a late one after reading
 * back the files that follow it. What becomes of a file is the store's one rule (decideFile): the checks here are
 * its shortcuts. Recoverable faults are retried with backoff, then quarantined. One per environment in the daemon;
 * `--ingest` and `--retry` run one too, with one try a file.
 */
export class Ingestor {
  readonly stats = new IngestStats();
  private readonly pending = new Map<string, Pending>();
  private running: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly now: () => number;
  private idleWaiters: (() => void)[] = [];
  private readonly preparer: FilePreparer;
  /** Versions read and found a duplicate or a conflict whose stat the ledger does not keep (same content, new mtime; a
   * conflicting file touched again): without this a rescan would read them again every time. */
  private readonly decidedUnrecorded = new Map<string, string>();
  private readonly refusedKeys = new Set<string>(); // too long to record, or not UTF-8: refused once (BAD_PATH)
  /** inOrderGiven: each key's place in the order submitted */
  private readonly given = new Map<string, number>();
  /** the order files apply in: (LastModified, key), or the order given (`--ingest`) */
  private readonly order: FileOrder;

  /** the backlog applies in passes, not a sorted pass: one did not begin (until the queue next runs dry) */
  private passesOff = false;
  /** tries of a standing sorted pass that failed to write, and when the next may run */
  private passTries = 0;
  private passRetryAt = 0;
  /** pauses that end at close */
  private closing: (() => void)[] = [];

  constructor(private readonly opts: IngestorOptions) {
    this.now = opts.now ?? Date.now;
    this.order = opts.inOrderGiven ? (a, b) => this.given.get(a.key)! - this.given.get(b.key)! : applyOrder;
    const worker = () =>
      new WorkerPreparer((message) =>
        opts.log.log('error', 'ingest.worker_failed', {
          env: opts.env,
          message,
          fallback: 'parsing on the main thread',
        }),
      );
    this.preparer = opts.preparer ?? new PreparerPool(opts.settings.parseWorkers, worker);
  }

  /** Queues bucket keys (relative paths); cheap to call with keys already applied. */
  async submit(keys: Iterable<string>, opts: { retry?: boolean } = {}): Promise<void> {
    for (const key of keys) {
      if (this.closed || isHiddenOrTemp(key) || this.refusedKeys.has(key)) continue;
      const s =
        keyLengthProblem(key) ??
        (await statBucketFile(this.rootOf(key), key).catch(
          (e: unknown) => undecodableNameFault(key, e) ?? readFault(key, e),
        ));
      if ('code' in s) {
        if (s.code === 'BAD_PATH') this.refusedKeys.add(key);
        this.report({ status: 'unread', key, fault: s });
        continue;
      }
      this.stats.noteSeen(s.lastModified);
      if (this.opts.inOrderGiven && !this.given.has(key)) this.given.set(key, this.given.size);
      const entry = this.opts.store.fileEntry(key);
      if (seenBefore(entry, s, opts.retry ?? false)) {
        this.report({ status: 'duplicate', entry: entry! });
        continue;
      }
      const prev = this.pending.get(key);
      this.pending.set(key, {
        key,
        lastModified: s.lastModified,
        size: s.size,
        tries: prev?.tries ?? 0,
        due: prev?.due ?? 0,
        retry: opts.retry || prev?.retry,
      });
    }
    this.stats.queueDepth = this.pending.size;
    this.kick();
  }

  /**
   * This version of a file is queued, or was decided (applied, quarantined, a conflict; a key too long to record
   * or not UTF-8: refused), so a folder rescan skips it. A file being read or applied now is neither (handed on: a duplicate).
   */
  holds(key: string, stat: FileStat | undefined): boolean {
    if (this.refusedKeys.has(key)) return true;
    if (!stat || keyLengthProblem(key)) return false; // the store cannot be asked
    return (
      this.pending.has(key) ||
      this.decidedUnrecorded.get(key) === versionOf(stat) ||
      this.opts.store.decidedBefore(key, stat)
    );
  }

  /** Resolves once nothing is pending or in flight (tests, CLI). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const wake of this.closing.splice(0)) wake();
    await this.running;
    this.preparer.close();
    this.pending.clear();
    this.wakeIdle();
  }

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      this.stats.queueDepth = this.pending.size;
      if (this.pending.size > 0 && !this.closed) this.schedule();
      else this.wakeIdle();
    });
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const next = Math.min(...[...this.pending.values()].map((p) => p.due));
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.kick();
      },
      Math.max(0, next - this.now()),
    );
  }

  private wakeIdle(): void {
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  /** The next due files in apply order. */
  private nextDue(): Pending[] {
    const t = this.now();
    return [...this.pending.values()].filter((p) => p.due <= t).sort(this.order);
  }

  private async drain(): Promise<void> {
    let inFlight: Promise<void> | undefined;
    for (;;) {
      if (this.closed) break;
      if (!(await this.noPassStanding())) continue;
      const due = this.nextDue();
      // An earlier file still waiting for a retry holds back later ones, to keep the apply order.
      const waiting = [...this.pending.values()].filter((p) => p.due > this.now()).sort(this.order)[0];
      const ready = waiting ? due.filter((p) => this.order(p, waiting) < 0) : due;
      if (ready.length === 0) {
        this.passesOff = false;
        break;
      }
      if (ready.length >= this.opts.settings.sortedPassFiles && !this.passesOff) {
        await inFlight;
        inFlight = undefined;
        await this.sortedPass(ready);
        continue;
      }
      // The batch goes to the prepare worker at once; it parses it while this thread runs the previous batch's transaction.
      const take = backlogBatch(ready, this.opts.settings.passFiles);
      for (const p of take) this.pending.delete(p.key);
      this.stats.queueDepth = this.pending.size + take.length; // the files in hand still wait (/healthz, metrics)
      const replies = take.map((p) => this.dispatch(p.key, p.tries + 1));
      const batch: PreparedFile[] = [];
      for (let i = 0; i < take.length; i++) {
        const prepared = await this.finish(take[i]!, await replies[i]!);
        if (prepared === 'retry') {
          // keep order: nothing after a file waiting for a retry (their parse is redone later)
          for (const q of take.slice(i + 1)) this.pending.set(q.key, q);
          break;
        }
        if (prepared !== undefined) batch.push(prepared);
      }
      await inFlight;
      // the batch in flight may have left a file waiting for a retry (the store could not write): it goes first
      if (batch.length > 0 && heldBack(this.pending.values(), batch[0]!, this.order))
        for (const f of batch) this.pending.set(f.key, untried(f));
      else if (batch.length > 0) inFlight = this.applyBatch(batch).then(() => undefined);
    }
    await inFlight;
  }

  /**
   * True when no sorted pass stands in the store. One left by a process that died is finished first (its files
   * were taken out of the bucket's order: nothing else may apply before it); one another process runs is waited
   * for. False after a pause or a resume: the caller looks again.
   */
  private async noPassStanding(): Promise<boolean> {
    const { store, log, env } = this.opts;
    const standing = store.standingPass();
    if (standing === 'none') return true;
    if (standing === 'elsewhere' || this.now() < this.passRetryAt) {
      await this.pause(PASS_WAIT_MS);
      return false;
    }
    log.log('warn', 'pass.resumed', { env });
    try {
      const statuses = await store.resumeSortedPass(this.passOptions());
      // the pass's files, queued again by the start's scan, are applied now: not read again to be found duplicates
      for (const { entry } of statuses)
        if (this.pending.get(entry.key) && versionOf(this.pending.get(entry.key)!) === versionOf(entry))
          this.pending.delete(entry.key);
      this.reportPass(statuses);
      this.passTries = 0;
    } catch (e) {
      if (!this.closed) this.passFailed(e);
    }
    return false;
  }

  /**
   * A backlog of `ingest.sortedPassFiles` files or more (docs/design.md, "A backlog in one sorted pass"): the files are
   * read and parsed in apply order (the worker keeps a pass ahead), merged into sorted runs a pass at a time, and
   * applied as one sorted pass. A file the pass leaves out (a duplicate, a conflict, a late file) applies the usual
   * way after it; a file kept for a retry ends the pass before it.
   */
  private async sortedPass(ready: readonly Pending[]): Promise<void> {
    const { store, log, env, settings } = this.opts;
    for (const p of ready) this.pending.delete(p.key);
    this.stats.queueDepth = this.pending.size + ready.length;
    const t0 = performance.now();
    const replies = new Map<number, Promise<PrepareReply>>();
    const prepared: Pending[] = []; // every file read to apply, as queued (not its records): back in the queue when the pass does not run
    const group: PreparedFile[] = [];
    let groupRecords = 0;
    const left: Pending[] = []; // files the pass leaves out, as queued: read again after it (their records are not kept meanwhile)
    let i = 0;
    let builder: SortedPassBuilder | undefined;
    try {
      builder = store.sortedPassBuilder();
      for (; i < ready.length && !this.closed; i++) {
        for (let j = i; j < Math.min(ready.length, i + settings.passFiles); j++)
          if (!replies.has(j)) replies.set(j, this.dispatch(ready[j]!.key, ready[j]!.tries + 1));
        const f = await this.finish(ready[i]!, await replies.get(i)!);
        replies.delete(i);
        if (f === 'retry') break; // it is queued again: the files after it wait for it
        if (f === undefined) {
          this.settledOne();
          continue;
        }
        prepared.push(untried(f));
        group.push(f);
        groupRecords += f.encoded?.count ?? f.parsed.records.length;
        // a run is cut by records, not files: many small files must not make thousands of runs to merge
        if (groupRecords >= RUN_RECORDS) {
          left.push(...builder.add(group.splice(0)).map(untried));
          groupRecords = 0;
        }
      }
      left.push(...builder.add(group.splice(0)).map(untried));
    } catch (e) {
      // the runs could not be written (the disk): the files apply in passes, as they would without one
      log.log('error', 'pass.spill_failed', { env, message: e instanceof Error ? e.message : String(e) });
      return this.passesInstead(builder, prepared, ready.slice(i));
    }
    if (this.closed) return this.passesInstead(builder, prepared, ready.slice(i)); // closing: nothing began
    for (const q of ready.slice(i + 1)) this.pending.set(q.key, q);
    log.log('info', 'pass.spilled', {
      env,
      files: builder.files.length,
      records: builder.records,
      runs: builder.runs.length,
      runBytes: builder.runBytes,
      ms: Math.round(performance.now() - t0),
    });
    if (builder.files.length === 0) builder.discard();
    else {
      let statuses: FileStatus[] | undefined;
      try {
        statuses = await store.applySortedPass(builder, this.passOptions());
      } catch (e) {
        if (this.closed) return; // stopped between chunks: the pass stands, and the next start goes on with it
        this.passFailed(e);
        // a pass that never began (it could not be recorded) leaves its files to apply in passes; one that began
        // stands (some chunks may have committed) and is resumed after the pause, the files it left out after it
        if (store.standingPass() === 'none') return this.passesInstead(builder, [...prepared, ...left], []);
        for (const p of left) this.pending.set(p.key, p);
        return;
      }
      if (statuses === undefined) return this.passesInstead(builder, prepared, []); // another process decided a file meanwhile
      this.reportPass(statuses, t0);
    }
    // the files left out apply after it, in passes (a pass would leave them out again)
    for (const p of left) this.pending.set(p.key, p);
    if (left.length > 0) this.passesOff = true;
  }

  /** One file of a sorted pass settled: the queue depth (/healthz, metrics) goes down as they do, not at the end. */
  private settledOne(): void {
    this.stats.queueDepth = Math.max(this.pending.size, this.stats.queueDepth - 1);
  }

  /** Chunks of `ingest.passChunkRecords`, each logged as it commits: a first load of millions shows its progress. */
  private passOptions(): SortedPassOptions {
    const { log, env, settings } = this.opts;
    return {
      chunkRecords: settings.passChunkRecords,
      // closing (a daemon's stop, under systemd's time-out): the pass stops after its chunk, to go on at the next start
      stop: () => this.closed,
      onChunk: (p) =>
        log.log('info', 'pass.chunk', { env, applied: p.applied, records: p.records, ms: Math.round(p.ms) }),
    };
  }

  /** A sorted pass that did not begin: its files back in the queue, applied in passes until the queue runs dry. */
  private passesInstead(
    builder: SortedPassBuilder | undefined,
    prepared: readonly Pending[],
    unread: readonly Pending[],
  ): void {
    builder?.discard();
    for (const p of prepared) this.pending.set(p.key, p);
    for (const p of unread) if (!this.pending.has(p.key)) this.pending.set(p.key, p); // a file waiting for its retry keeps its pause
    this.passesOff = true;
  }

  private reportPass(statuses: readonly FileStatus[], t0?: number): void {
    for (const r of statuses) {
      this.settledOne();
      this.report(r, r.entry.timings?.applyMs ?? 0);
    }
    this.stats.lastProgressAt = this.now();
    const records = statuses.reduce((n, r) => n + (r.entry.counts?.records ?? 0), 0);
    this.opts.log.log('info', 'pass.committed', {
      env: this.opts.env,
      files: statuses.length,
      records,
      ...(t0 !== undefined ? { ms: Math.round(performance.now() - t0) } : {}),
    });
  }

  /** A sorted pass could not write (the store or disk full): it stands, and is resumed after a backoff. */
  private passFailed(e: unknown): void {
    const cause = storeWriteFault(e);
    this.passTries++;
    this.stats.noteStoreFailure(cause, this.opts.store.appliedSeq().seq);
    const delay = retryDelayMs(this.opts.settings.retryBaseMs, this.passTries);
    this.passRetryAt = this.now() + delay;
    this.opts.log.log('error', 'pass.failed', {
      env: this.opts.env,
      code: cause.code,
      message: cause.message,
      tries: this.passTries,
      retryInMs: delay,
    });
  }

  /** Waits `ms`, or less when the ingestor closes. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.closing.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** The worker reads, hashes, checks the path, parses and encodes the file (its try number `tries`). */
  private dispatch(key: string, tries: number, readBack?: ReadBackAt): Promise<PrepareReply> {
    const { platforms, settings } = this.opts;
    const input = {
      root: readBack?.root ?? this.rootOf(key),
      key,
      platforms: [...platforms],
      maxDecompressedBytes: settings.maxDecompressedBytes,
      tries,
    };
    return this.preparer.prepare(readBack ? { ...input, readBackAs: readBack.readBackAs } : input);
  }

  /** Turns a worker reply into a file to apply, or settles it here; undefined when there is nothing to apply. */
  private async finish(p: Pending, reply: PrepareReply): Promise<PreparedFile | undefined | 'retry'> {
    const { store, log, env } = this.opts;
    const tries = p.tries + 1;
    if (reply.kind === 'readError') {
      if (reply.fault.code !== 'FILE_MISSING') return this.retryOrQuarantine(p, tries, reply.fault);
      this.report({ status: 'unread', key: p.key, fault: reply.fault });
      return undefined;
    }
    const faulty = reply.kind === 'fault';
    // the rule's answer from the ledger as it is now: a duplicate needs no transaction
    const decision = store.decide(reply.file, faulty, p.retry ?? false);
    if (decision === 'duplicate' || decision === 'conflict') {
      if (this.decidedUnrecorded.size >= 100_000) this.decidedUnrecorded.clear(); // bounded: at worst read once more
      this.decidedUnrecorded.set(p.key, versionOf(reply.file));
    }
    if (decision === 'duplicate') {
      this.report({ status: 'duplicate', entry: store.fileEntry(p.key)! });
      return undefined;
    }
    if (reply.kind === 'fault') {
      // a conflict is recorded at once; a fault that may pass by itself is retried before it quarantines
      const file = { ...reply.file, platform: reply.platform };
      if (decision === 'quarantine' && RECOVERABLE_FILE_FAULTS.has(reply.fault.code))
        return this.retryOrQuarantine(p, tries, reply.fault, file);
      return this.quarantine(p, tries, file, reply.fault);
    }
    const prepared = reply.prepared;
    prepared.retry = p.retry;
    if (this.opts.inOrderGiven) Object.assign(prepared, { inOrderGiven: true, readFrom: this.rootOf(p.key) });
    log.log('debug', 'file.parsed', { env, key: p.key, records: prepared.encoded?.count });
    return prepared;
  }

  /** A recoverable fault: tried again after a backoff, or quarantined once the tries are used up. */
  private async retryOrQuarantine(
    p: Pending,
    tries: number,
    f: Fault<FileFaultCode>,
    file?: FileIdentity & { platform?: string },
  ): Promise<'retry' | undefined> {
    const { settings } = this.opts;
    if (tries >= settings.maxTries) {
      const gaveUp = settings.maxTries > 1 ? fault(f.code, `${f.message} (gave up after ${tries} tries)`) : f;
      if (!file && this.opts.recordUnreadable === false) {
        this.report({ status: 'unread', key: p.key, fault: gaveUp as Fault<'READ_FAILED'> });
        return undefined;
      }
      // a file that could not be read is quarantined by what its stat says: its content is unknown
      const identity = file ?? {
        key: p.key,
        hash: UNREAD_HASH,
        ...(await statBucketFile(this.rootOf(p.key), p.key).catch(() => ({ size: 0, lastModified: p.lastModified }))),
      };
      return this.quarantine(p, tries, identity, gaveUp);
    }
    return this.retryLater(p, tries, 'warn', 'file.retry', { code: f.code, message: f.message });
  }

  /** Keeps the file to try again after a backoff (pending.ts, retryDelayMs). */
  private retryLater(p: Pending, tries: number, level: Level, event: string, fields: Record<string, unknown>): 'retry' {
    const delay = retryDelayMs(this.opts.settings.retryBaseMs, tries);
    this.opts.log.log(level, event, { env: this.opts.env, key: p.key, ...fields, tries, retryInMs: delay });
    this.stats.retries++;
    this.pending.set(p.key, { ...p, tries, due: this.now() + delay });
    return 'retry';
  }

  /** Applies a batch in one transaction; false when a file of it was kept for a retry (the files after it too). */
  private async applyBatch(batch: PreparedFile[]): Promise<boolean> {
    const { store, log, env } = this.opts;
    let results: ApplyStatus[];
    const t0 = performance.now();
    try {
      results = await store.applyFiles(batch);
    } catch (e) {
      // a sorted pass began beside it (another process): the batch waits for it, no try counted
      if (store.standingPass() !== 'none') {
        for (const f of batch) this.pending.set(f.key, untried(f));
        return false;
      }
      // Nothing of the batch was committed. Apply its files one by one so one bad file cannot hold back or
      // quarantine the others.
      if (batch.length > 1)
        return this.oneByOne(
          batch,
          (f) => f,
          (f) => this.applyBatch([f]),
        );
      const f = batch[0]!;
      const cause = storeWriteFault(e); // STORE_FULL, DISK_FULL or APPLY_FAILED
      this.stats.noteStoreFailure(cause, store.appliedSeq().seq);
      return (
        (await this.retryOrQuarantine(tried(f), f.tries, fault(cause.code, `${f.key}: ${cause.message}`), f)) !==
        'retry'
      );
    }
    const ms = performance.now() - t0;
    for (const r of results) if (r.status !== 'late') this.report(r, ms / results.length);
    this.stats.lastProgressAt = this.now();
    log.log('debug', 'batch.committed', { env, files: batch.length, ms: Math.round(ms) });
    const late = results.flatMap((r) => (r.status === 'late' ? [r] : []));
    return this.oneByOne(
      late,
      (r) => r.file,
      (r) => this.applyLate(r.file, r.later),
    );
  }

  /** Files one at a time; false when one was kept for a retry: it holds back the rest, back in the queue untried. */
  private async oneByOne<T>(
    items: readonly T[],
    fileOf: (item: T) => PreparedFile,
    apply: (item: T) => Promise<boolean>,
  ): Promise<boolean> {
    for (const [i, item] of items.entries()) {
      if (await apply(item)) continue;
      for (const g of items.slice(i + 1).map(fileOf)) this.pending.set(g.key, untried(g));
      return false;
    }
    return true;
  }

  /** A file that came after files that follow it (read-later-files.ts): applied once they are read back; false: kept for a retry. */
  private async applyLate(f: PreparedFile, later: FileEntry[]): Promise<boolean> {
    this.opts.log.log('info', 'file.late', {
      env: this.opts.env,
      key: f.key,
      later: later.length,
      last: later.at(-1)?.key,
    });
    const overtaken = await readLaterFiles(f, later, (at) => this.dispatch(at.key, 1, at), this.opts.root);
    if (!('fault' in overtaken)) return this.applyBatch([{ ...f, overtaken }]);
    if (overtaken.lasting) return (await this.quarantine(tried(f), f.tries, f, overtaken.fault)) !== 'retry';
    return (await this.retryOrQuarantine(tried(f), f.tries, overtaken.fault, f)) !== 'retry';
  }

  /** The folder a key is read from. */
  private rootOf(key: string): string {
    return this.opts.readFrom?.get(key) ?? this.opts.root;
  }

  /** Where every outcome goes: the stats, the log (outcomes.ts), and the caller's onOutcome. */
  private report(o: IngestOutcome, applyMs = 0): void {
    countAndLog(o, { env: this.opts.env, log: this.opts.log, stats: this.stats, now: this.now() }, applyMs);
    this.opts.onOutcome?.(o);
  }

  /**
   * Records the file's quarantine. That is a write too: when the store cannot make it (full), the file is never
   * dropped: the daemon keeps it and tries it again (applying it first, should there be room by then).
   */
  private async quarantine(
    p: Pending,
    tries: number,
    file: FileIdentity & { platform?: string },
    f: Fault<FileFaultCode>,
  ): Promise<'retry' | undefined> {
    const { store, keepUnrecorded } = this.opts;
    let status: FileStatus;
    try {
      status = await store.quarantineFile(file, f, { tries, retry: p.retry ?? false, now: () => new Date(this.now()) });
    } catch (e) {
      const writeFault = storeWriteFault(e);
      this.stats.noteStoreFailure(writeFault, store.appliedSeq().seq);
      if (keepUnrecorded === false) this.report({ status: 'unrecorded', key: p.key, fault: f, writeFault });
      else
        return this.retryLater(p, tries, 'error', 'file.quarantine_failed', {
          code: writeFault.code,
          message: writeFault.message,
          fileCode: f.code,
        });
      return undefined;
    }
    this.report(status);
    return undefined;
  }
}
