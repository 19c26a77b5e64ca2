import { join } from 'node:path';
import type { EnvName } from '../config/index.ts';
import type { ParsedDeposit } from '../deposit/index.ts';
import { applyRecords } from './apply-records.ts';
import { encodeRecords, type EncodedRecords } from './encoded-records.ts';
import { openEnvironment, type StoreDbs } from './environment.ts';
import { ByteWriter } from './bytes.ts';
import { decodeHolding, type DecodedHolding } from './holding-codec.ts';
import { doiRange, splitHoldingKey } from './holding-key.ts';
import { MAX_REPORTED_LINES, type ConflictEntry, type FileCounts, type FileEntry } from './ledger-types.ts';
import type { ReplaceMode, UpdatesEntry } from './updates-store.ts';
import { UpdatesIndex } from './updates-index.ts';
import { UpdatesImport } from './updates-import.ts';

/** A file read and parsed, ready to be applied with its ledger entry in one transaction. */
export interface PreparedFile {
  key: string;
  platform: string;
  size: number;
  hash: string;
  lastModified: number;
  /** the parse report; its `records` may be left empty when `encoded` carries them (the ingest worker) */
  parsed: ParsedDeposit;
  /** the valid records encoded for the store; built from `parsed.records` when absent */
  encoded?: EncodedRecords;
  timings: { readMs: number; parseMs: number };
  tries: number;
  /** set by an operator's --retry: a quarantined entry for this key may be replaced */
  retry?: boolean;
}

export type ApplyStatus =
  /** applied now, entry written */
  | { status: 'applied'; entry: FileEntry }
  /** the same identity was applied before: nothing done */
  | { status: 'duplicate'; entry: FileEntry }
  /** same key, other content: recorded as a conflict, nothing applied */
  | { status: 'conflict'; conflict: ConflictEntry; entry: FileEntry };

export interface HoldingView extends DecodedHolding {
  platform: string;
}

export interface DumpLine {
  env: EnvName;
  platform: string;
  doi: string;
  accessType?: string;
  vor?: { url: string; contentType?: string }[];
  updated: string;
}

/** The LMDB store of one environment: holdings with their history, the file ledger, update information. */
export class Store {
  private readonly out = new ByteWriter();
  private closed = false;

  private constructor(
    readonly env: EnvName,
    readonly path: string,
    readonly dbs: StoreDbs,
  ) {}

  static open(dir: string, env: EnvName, opts: { mapSizeBytes: number; readOnly?: boolean }): Store {
    const path = join(dir, env);
    return new Store(env, path, openEnvironment(path, opts));
  }

  /**
   * Applies files in order, all in ONE write transaction (a cold replica batches queued files): each file whole
   * with its ledger entry, or none of them after a crash. Identity is re-checked inside the transaction, so two
   * processes applying the same file cannot both apply it.
   */
  async applyFiles(files: readonly PreparedFile[], now: () => Date = () => new Date()): Promise<ApplyStatus[]> {
    const { root } = this.dbs;
    return root.transaction(() => files.map((f) => this.applyOne(f, now)));
  }

  /** Synchronous variant (CLI, tests): commits before returning. */
  applyFilesSync(files: readonly PreparedFile[], now: () => Date = () => new Date()): ApplyStatus[] {
    return this.dbs.root.transactionSync(() => files.map((f) => this.applyOne(f, now)));
  }

  private applyOne(f: PreparedFile, now: () => Date): ApplyStatus {
    const { files, conflicts, fileSeqs, holdings, meta } = this.dbs;
    const existing = files.get(f.key);
    if (existing && existing.hash === f.hash && existing.outcome === 'applied') return { status: 'duplicate', entry: existing };
    if (existing && existing.hash === f.hash && !f.retry) return { status: 'duplicate', entry: existing };
    if (existing && existing.hash !== f.hash && (existing.outcome === 'applied' || !f.retry)) {
      const conflict = this.putConflict(f, existing, now);
      return { status: 'conflict', conflict, entry: existing };
    }
    const seq: number = (meta.get('nextSeq') as number | undefined) ?? 1;
    meta.putSync('nextSeq', seq + 1);
    fileSeqs.putSync(seq, f.key);
    const counts: FileCounts = {
      records: f.parsed.recordLines,
      added: 0,
      updated: 0,
      removed: 0,
      unchanged: 0,
      noopRemovals: 0,
      superseded: f.parsed.superseded,
      rejected: f.parsed.rejected.length,
    };
    const t0 = performance.now();
    applyRecords(holdings, f.encoded ?? encodeRecords(f.parsed.records, f.platform), f.lastModified, seq, counts, this.out);
    const live = counts.added - counts.removed;
    if (live !== 0) {
      const counter = `live:${f.platform}`;
      meta.putSync(counter, ((meta.get(counter) as number | undefined) ?? 0) + live);
    }
    const entry: FileEntry = {
      key: f.key,
      platform: f.platform,
      size: f.size,
      hash: f.hash,
      lastModified: f.lastModified,
      outcome: 'applied',
      seq,
      counts,
      rejectedLines: f.parsed.rejected.slice(0, MAX_REPORTED_LINES),
      rejectedNotListed: Math.max(0, f.parsed.rejected.length - MAX_REPORTED_LINES),
      timings: { ...f.timings, applyMs: Math.round((performance.now() - t0) * 10) / 10 },
      tries: f.tries,
      recordedAt: now().toISOString(),
    };
    files.putSync(f.key, entry);
    return { status: 'applied', entry };
  }

  /** Same key as a ledgered file, other content: kept for the operator, never applied (names must be unique). */
  async recordConflict(f: Pick<PreparedFile, 'key' | 'size' | 'hash' | 'lastModified'>, now: () => Date = () => new Date()): Promise<ConflictEntry | undefined> {
    return this.dbs.root.transaction(() => {
      const existing = this.dbs.files.get(f.key);
      return existing && existing.hash !== f.hash ? this.putConflict(f, existing, now) : undefined;
    });
  }

  private putConflict(f: Pick<PreparedFile, 'key' | 'size' | 'hash' | 'lastModified'>, existing: FileEntry, now: () => Date): ConflictEntry {
    const seen = this.dbs.conflicts.get(`${f.key}\u0000${f.hash}`);
    if (seen) return seen;
    const conflict: ConflictEntry = {
      key: f.key,
      size: f.size,
      hash: f.hash,
      lastModified: f.lastModified,
      appliedHash: existing.hash,
      recordedAt: now().toISOString(),
    };
    this.dbs.conflicts.putSync(`${f.key}\u0000${f.hash}`, conflict);
    return conflict;
  }

  /** Records a file that cannot be applied (file-level fault, path fault, or retries exhausted). */
  async quarantine(entry: Omit<FileEntry, 'outcome'>): Promise<FileEntry> {
    const full: FileEntry = { ...entry, outcome: 'quarantined' };
    await this.dbs.root.transaction(() => {
      const existing = this.dbs.files.get(entry.key);
      if (existing?.outcome === 'applied') return; // never overwrite an applied file's ledger entry
      this.dbs.files.putSync(entry.key, full);
    });
    return full;
  }

  /** Operator's --retry: forget a quarantine so the key can be attempted again. */
  async clearQuarantine(key: string): Promise<boolean> {
    return this.dbs.root.transaction(() => {
      let cleared = false;
      const existing = this.dbs.files.get(key);
      if (existing?.outcome === 'quarantined') {
        this.dbs.files.removeSync(key);
        cleared = true;
      }
      return cleared;
    });
  }

  fileEntry(key: string): FileEntry | undefined {
    return this.dbs.files.get(key);
  }

  fileKeyOfSeq(seq: number): string | undefined {
    return this.dbs.fileSeqs.get(seq);
  }

  *ledger(): Generator<FileEntry> {
    for (const { value } of this.dbs.files.getRange()) yield value;
  }

  *failures(): Generator<{ kind: 'quarantined'; entry: FileEntry } | { kind: 'conflict'; conflict: ConflictEntry }> {
    for (const { value } of this.dbs.files.getRange()) if (value.outcome === 'quarantined') yield { kind: 'quarantined', entry: value };
    for (const { value } of this.dbs.conflicts.getRange()) yield { kind: 'conflict', conflict: value };
  }

  /** Every platform's holding of one DOI, tombstones included (their history outlives them). One range read. */
  holdingsOf(doiKey: string): HoldingView[] {
    const out: HoldingView[] = [];
    for (const { key, value } of this.dbs.holdings.getRange(doiRange(doiKey))) {
      out.push({ platform: splitHoldingKey(key).platform, ...decodeHolding(doiKey, value) });
    }
    return out;
  }

  /** Live holdings in store order (DOI key, then platform), as DESIGN section 7 dump lines. */
  *dump(filter: { platform?: string; doiKey?: string } = {}): Generator<DumpLine> {
    const range = filter.doiKey !== undefined ? doiRange(filter.doiKey) : {};
    for (const { key, value } of this.dbs.holdings.getRange(range)) {
      if ((value[0]! & 1) === 0) continue; // tombstone
      const { doiKey, platform } = splitHoldingKey(key);
      if (filter.platform !== undefined && platform !== filter.platform) continue;
      const h = decodeHolding(doiKey, value);
      // field order is part of the dump format (DESIGN section 7): replicas compare bytes
      const line: DumpLine = { env: this.env, platform, doi: h.state!.doi } as DumpLine;
      if (h.state!.accessType) line.accessType = h.state!.accessType;
      if (h.state!.vor) line.vor = h.state!.vor;
      line.updated = new Date(h.updated).toISOString();
      yield line;
    }
  }

  /** Starts a bounded-memory import of one feed (see updates-import.ts). */
  beginUpdatesImport(origin: string, mode: ReplaceMode): UpdatesImport {
    return new UpdatesImport(this.dbs, origin, mode);
  }

  updatesOf(doiKey: string): UpdatesEntry | undefined {
    return this.dbs.updates.get(doiKey) as UpdatesEntry | undefined;
  }

  /** The in-memory read index the Updates API answers from (one per store, built on first use). */
  get updatesIndex(): UpdatesIndex {
    this.index ??= new UpdatesIndex(this.dbs);
    return this.index;
  }
  private index: UpdatesIndex | undefined;

  liveCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { key, value } of this.dbs.meta.getRange({ start: 'live:', end: 'live;' })) out[(key as string).slice(5)] = value as number;
    return out;
  }

  /** Waits for pending async writes (and their flush) to finish. */
  async flushed(): Promise<void> {
    await this.dbs.root.flushed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dbs.root.close();
  }
}
