import type { EnvName, IngestSettings } from '../config/index.ts';
import { isHiddenOrTemp, parseDepositPath } from '../deposit/index.ts';
import type { Logger } from '../log.ts';
import type { ApplyStatus, FileEntry, PreparedFile, Store } from '../store/index.ts';
import type { Fault } from '../fault.ts';
import { WorkerPreparer, type FilePreparer } from './file-preparer.ts';
import { RECOVERABLE_FILE_FAULTS } from './prepare.ts';
import type { PrepareReply } from './prepare-messages.ts';
import { statBucketFile } from './read-bucket-file.ts';
import { IngestStats } from './stats.ts';

/**
 * A cold replica applies several queued files per transaction (DESIGN section 4). Two, measured: larger batches
 * catch up no faster (the parse worker sets the pace) but free more pages per commit, and LMDB rewrites its whole
 * free list at every later commit. After the 120-file catch-up, batches of 8 left a 442 MB file whose free list
 * made each later single-file commit ~90 ms slower; batches of 2 left 315 MB (bench/ingest.ts, scenario d).
 */
const MAX_BATCH_FILES = 2;

interface Pending {
  key: string;
  lastModified: number;
  tries: number;
  /** not before (ms, from the injected clock) */
  due: number;
  retry?: boolean;
}

export interface IngestorOptions {
  env: EnvName;
  store: Store;
  /** the bucket folder (a local bucket, or an S3 mirror) */
  root: string;
  platforms: ReadonlySet<string>;
  settings: IngestSettings;
  log: Logger;
  now?: () => number;
  /** where files are read and parsed: a worker thread unless given (tests may pass an InlinePreparer) */
  preparer?: FilePreparer;
}

/**
 * Applies bucket files in (LastModified, key) order, one file whole per ledger entry. Files already in the
 * ledger with the same identity are no-ops; recoverable faults are retried with backoff, then quarantined.
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

  constructor(private readonly opts: IngestorOptions) {
    this.now = opts.now ?? Date.now;
    this.preparer =
      opts.preparer ??
      new WorkerPreparer((message) => opts.log.log('error', 'ingest.worker_failed', { env: opts.env, message, fallback: 'parsing on the main thread' }));
  }

  /** Queues bucket keys (relative paths); cheap to call with keys already applied. */
  async submit(keys: Iterable<string>, opts: { retry?: boolean } = {}): Promise<void> {
    for (const key of keys) {
      if (this.closed || isHiddenOrTemp(key)) continue;
      let s: { size: number; lastModified: number };
      try {
        s = await statBucketFile(this.opts.root, key);
      } catch {
        continue; // vanished: nothing to apply
      }
      if (!opts.retry && this.alreadyLedgered(key, s)) continue;
      const prev = this.pending.get(key);
      this.pending.set(key, { key, lastModified: s.lastModified, tries: prev?.tries ?? 0, due: prev?.due ?? 0, retry: opts.retry || prev?.retry });
    }
    this.stats.queueDepth = this.pending.size;
    this.kick();
  }

  /** Resolves once nothing is pending or in flight (tests, CLI). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.preparer.close();
    this.pending.clear();
    this.wakeIdle();
  }

  private alreadyLedgered(key: string, s: { size: number; lastModified: number }): boolean {
    const entry = this.opts.store.fileEntry(key);
    // Same size and LastModified as the ledgered file: the same deposit (a changed object gets a new LastModified).
    return entry !== undefined && entry.size === s.size && entry.lastModified === s.lastModified;
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
    const next = Math.min(...[...this.pending.values()].map((p) => this.dueAt(p)));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, Math.max(0, next - this.now()));
  }

  private wakeIdle(): void {
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  /** When a pending file may be applied: after its retry backoff. */
  private dueAt(p: Pending): number {
    return p.due;
  }

  /** The next due files in apply order. */
  private nextDue(): Pending[] {
    const t = this.now();
    return [...this.pending.values()].filter((p) => this.dueAt(p) <= t).sort(applyOrder);
  }

  private async drain(): Promise<void> {
    let inFlight: Promise<void> | undefined;
    for (;;) {
      if (this.closed) break;
      const due = this.nextDue();
      // An earlier file still waiting for a retry holds back later ones, to keep the apply order.
      const waiting = [...this.pending.values()].filter((p) => this.dueAt(p) > this.now()).sort(applyOrder)[0];
      const ready = waiting ? due.filter((p) => applyOrder(p, waiting) < 0) : due;
      if (ready.length === 0) break;
      // The batch's files go to the prepare worker at once; it parses them while this thread runs the previous
      // batch's transaction (one transaction in flight).
      const take = ready.slice(0, MAX_BATCH_FILES);
      for (const p of take) this.pending.delete(p.key);
      const replies = take.map((p) => this.dispatch(p));
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
      if (batch.length > 0) inFlight = this.applyBatch(batch);
    }
    await inFlight;
  }

  /** Path rules first (no read needed), then the worker reads, hashes, parses and encodes the file. */
  private async dispatch(p: Pending): Promise<PrepareReply | Fault> {
    const pathCheck = parseDepositPath(p.key, this.opts.platforms);
    if ('code' in pathCheck) return pathCheck;
    const { root, platforms, settings } = this.opts;
    return this.preparer.prepare({ root, key: p.key, platforms: [...platforms], maxDecompressedBytes: settings.maxDecompressedBytes, tries: p.tries + 1 });
  }

  /** Turns a worker reply into a file to apply; quarantines file-level faults; undefined when there is nothing to apply. */
  private async finish(p: Pending, reply: PrepareReply | Fault): Promise<PreparedFile | undefined | 'retry'> {
    const { root, settings, store, log, env } = this.opts;
    const tries = p.tries + 1;
    if (!('kind' in reply)) {
      const s = await statBucketFile(root, p.key).catch(() => undefined);
      if (!s) return undefined;
      await this.quarantine({ key: p.key, size: s.size, hash: '', lastModified: s.lastModified, code: reply.code, message: reply.message, tries, recordedAt: '' });
      return undefined;
    }
    if (reply.kind === 'readError') {
      if (reply.code === 'ENOENT') return undefined;
      return this.retryOrQuarantine(p, tries, 'READ_FAILED', `${p.key}: cannot read: ${reply.message}`);
    }
    const file = reply.file;
    const existing = store.fileEntry(p.key);
    if (existing && existing.hash === file.hash && !p.retry) return undefined;
    if (existing?.outcome === 'applied' && existing.hash !== file.hash) {
      const conflict = await store.recordConflict(file);
      if (conflict) this.report({ status: 'conflict', conflict, entry: existing }, 0);
      return undefined;
    }
    if (reply.kind === 'fault') {
      const fault = reply.fault;
      if (RECOVERABLE_FILE_FAULTS.has(fault.code) && tries < settings.maxTries)
        return this.retryOrQuarantine(p, tries, fault.code, `${p.key}: ${fault.message}`);
      await this.quarantine({
        key: p.key,
        platform: fault.platform,
        size: file.size,
        hash: file.hash,
        lastModified: file.lastModified,
        code: fault.code,
        message: `${p.key}: ${fault.message}`,
        tries,
        recordedAt: '',
      });
      return undefined;
    }
    const prepared = reply.prepared;
    prepared.retry = p.retry;
    log.log('debug', 'file.parsed', { env, key: p.key, records: prepared.encoded?.count });
    return prepared;
  }

  private async retryOrQuarantine(p: Pending, tries: number, code: string, message: string): Promise<'retry' | undefined> {
    const { settings, log, env } = this.opts;
    if (tries >= settings.maxTries) {
      const s = await statBucketFile(this.opts.root, p.key).catch(() => ({ size: 0, lastModified: p.lastModified }));
      await this.quarantine({ key: p.key, size: s.size, hash: '', lastModified: s.lastModified, code, message: `${message} (gave up after ${tries} tries)`, tries, recordedAt: '' });
      return undefined;
    }
    const delay = settings.retryBaseMs * 2 ** (tries - 1);
    log.log('warn', 'file.retry', { env, key: p.key, code, message, tries, retryInMs: delay });
    this.stats.retries++;
    this.pending.set(p.key, { ...p, tries, due: this.now() + delay });
    return 'retry';
  }

  private async applyBatch(batch: PreparedFile[]): Promise<void> {
    const { store, log, env } = this.opts;
    let results: ApplyStatus[];
    const t0 = performance.now();
    try {
      results = await store.applyFiles(batch);
    } catch (e) {
      // Nothing of the batch was committed. Apply its files one by one so one bad file cannot hold back or
      // quarantine the others; a single file that fails is retried later (map full, disk error...).
      if (batch.length > 1) {
        for (const f of batch) await this.applyBatch([f]);
        return;
      }
      const f = batch[0]!;
      const p: Pending = { key: f.key, lastModified: f.lastModified, tries: f.tries, due: 0, retry: f.retry };
      await this.retryOrQuarantine(p, f.tries, 'APPLY_FAILED', `${f.key}: the store transaction failed: ${(e as Error).message}`);
      return;
    }
    const ms = performance.now() - t0;
    for (const r of results) this.report(r, ms / results.length);
    this.stats.lastProgressAt = this.now();
    log.log('debug', 'batch.committed', { env, files: batch.length, ms: Math.round(ms) });
  }

  private report(r: ApplyStatus, ms: number): void {
    const { log, env } = this.opts;
    if (r.status === 'applied') {
      this.stats.noteApplied(r.entry, ms);
      log.log(r.entry.counts!.rejected > 0 ? 'warn' : 'info', 'file.applied', {
        env,
        key: r.entry.key,
        ...r.entry.counts,
        firstRejected: r.entry.rejectedLines?.slice(0, 3),
      });
    } else if (r.status === 'conflict') {
      this.stats.conflicts++;
      log.log('error', 'file.conflict', {
        env,
        key: r.conflict.key,
        code: 'KEY_REUSED',
        message: `${r.conflict.key}: this key was already applied with other content; the new content is quarantined (file names must be unique)`,
      });
    }
  }

  private async quarantine(entry: Omit<FileEntry, 'outcome'>): Promise<void> {
    const { store, log, env } = this.opts;
    await store.quarantine({ ...entry, recordedAt: new Date(this.now()).toISOString() });
    this.stats.quarantined++;
    this.stats.lastProgressAt = this.now();
    log.log('error', 'file.quarantined', { env, key: entry.key, code: entry.code, message: entry.message });
  }
}

/** DESIGN section 2: files apply in (bucket LastModified, key) order. */
function applyOrder(a: Pending, b: Pending): number {
  return a.lastModified - b.lastModified || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
