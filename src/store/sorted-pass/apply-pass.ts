import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ByteWriter } from '../../bytes/index.ts';
import type { FileStatus } from '../apply/index.ts';
import {
  accessDelta,
  addLiveCounts,
  KeyMerge,
  type LiveMove,
  nextValue,
  noteApplied,
  type RecordCounts,
} from '../apply/index.ts';
import { META, putFileEntry, type StoreDbs, writeTransaction } from '../environment/index.ts';
import { ACCESS_CODES } from '../holdings/index.ts';
import type { FileEntry } from '../ledger/index.ts';
import { joinsPass, type PassFile, type SortedPassBuilder } from './pass-files.ts';
import { ChunkCursor, RunCursor, writeRunRecord } from './run-file.ts';

/** This process, as a pass's holder names it: a pass held by a process that is gone is resumed by the next writer. */
const THIS_PROCESS = `${process.pid}:${randomUUID()}`;
/** passes this process is running now (by id) */
const running = new Set<string>();

/** the counts a pass keeps per file, in this order, as it goes */
const COUNTED = ['added', 'updated', 'removed', 'unchanged', 'noopRemovals'] as const;
/** and beside them, its live holdings moved per access code */
const ACCESS_CODE_COUNT = ACCESS_CODES.length;

/** META.sortedPass: a sorted pass that began and has not ended. Its files are in META.sortedPassFiles. */
export interface PassRecord {
  id: string;
  /** `${pid}:${uuid}` of the process running it */
  holder: string;
  /** the runs' folder, relative to the store's */
  dir: string;
  runs: string[];
  /** the holdings were empty when it began: keys are appended, none is read */
  append: boolean;
  /** the apply sequence number of its first file; the files take the numbers after it in order */
  firstSeq: number;
  records: number;
  /** records applied so far, and the last key committed (its chunks resume after it) */
  applied: number;
  done?: Uint8Array;
  /** COUNTED per file, in file order */
  counts: number[];
  /**
   * the live holdings moved per access code (ACCESS_CODES.length per file, in file order): kept beside `counts`,
   * whose names are the ledger's. None in a pass an older program began (apply-pass takes it as zeros so far)
   */
  access?: number[];
  /** ms spent applying so far (the files' applyMs are their shares of it) */
  ms: number;
}

/** Whether a sorted pass stands unfinished, and whether a live process other than this one runs it. */
export function standingPass(dbs: StoreDbs): 'none' | 'elsewhere' | 'abandoned' {
  const p = dbs.meta.get(META.sortedPass) as PassRecord | undefined;
  if (!p) return 'none';
  if (running.has(p.id)) return 'elsewhere'; // this process, another ingestor: it waits as for another process
  if (p.holder === THIS_PROCESS) return 'abandoned';
  const pid = Number(p.holder.split(':')[0]);
  // this pid with another uuid: an earlier process of the same pid (a container's pid 1 restarted) that died
  return pid !== process.pid && processAlive(pid) ? 'elsewhere' : 'abandoned';
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface PassOptions {
  /** records per commit (a crash loses at most one chunk's work) */
  chunkRecords: number;
  /** told after every committed chunk (tests stop a pass there) */
  onChunk?: (p: PassRecord) => void;
  /** asked after every committed chunk: true stops the pass there (PassStopped), to be resumed */
  stop?: () => boolean;
}

/** A pass stopped between chunks when asked (PassOptions.stop): it stands, and the next writer resumes it. */
export class PassStopped extends Error {
  constructor(readonly record: PassRecord) {
    super(
      `sorted pass ${record.id} stopped after ${record.applied} of ${record.records} records; the next start goes on from there`,
    );
  }
}

/**
 * Begins a built pass: in one transaction, every file is decided again (another process may have applied one
 * meanwhile) and the pass is recorded, which holds off every other writer of holdings until it ends. Undefined
 * when a file no longer joins: nothing was written, and the caller applies the files the usual way.
 */
export async function beginPass(dbs: StoreDbs, b: SortedPassBuilder): Promise<PassRecord | undefined> {
  b.seal();
  return writeTransaction(dbs, () => {
    if (dbs.meta.get(META.sortedPass) !== undefined) return undefined;
    for (const f of b.files)
      if (!joinsPass(dbs, { ...f.entry, platform: f.entry.platform!, inOrderGiven: f.inOrderGiven }, f.retry ?? false))
        return undefined;
    let empty = true;
    for (const _ of dbs.holdings.getKeys({ limit: 1 })) empty = false;
    const record: PassRecord = {
      id: b.id,
      holder: THIS_PROCESS,
      dir: relative(dbs.path, b.dir),
      runs: b.runs,
      append: empty,
      firstSeq: (dbs.meta.get(META.nextSeq) as number | undefined) ?? 1,
      records: b.records,
      applied: 0,
      counts: new Array(b.files.length * COUNTED.length).fill(0),
      access: new Array(b.files.length * ACCESS_CODE_COUNT).fill(0),
      ms: 0,
    };
    dbs.meta.putSync(META.sortedPassFiles, b.files);
    dbs.meta.putSync(META.sortedPass, record);
    return record;
  });
}

/**
 * Takes over an abandoned pass (its process is gone) for this process, unless another process took it over first
 * (undefined: it is theirs now) or it ended meanwhile.
 */
export async function adoptPass(dbs: StoreDbs): Promise<PassRecord | undefined> {
  return writeTransaction(dbs, () => {
    if (standingPass(dbs) !== 'abandoned') return undefined; // decided again in the transaction: one process adopts
    const p = { ...(dbs.meta.get(META.sortedPass) as PassRecord), holder: THIS_PROCESS };
    dbs.meta.putSync(META.sortedPass, p);
    return p;
  });
}

/**
 * In a chunk's or the end's transaction: the pass is still this process's, as far as this process took it. Its
 * access deltas so far as stored (a writable open that counted the access counters meanwhile set them: live-counts.ts).
 */
function stillHeld(dbs: StoreDbs, record: PassRecord): number[] {
  const p = dbs.meta.get(META.sortedPass) as PassRecord | undefined;
  if (p?.id !== record.id || p.holder !== THIS_PROCESS || p.applied !== record.applied)
    throw new Error(`sorted pass ${record.id}: another process took it over (${p?.holder ?? 'ended'}); this one stops`);
  return p.access ?? new Array((p.counts.length / COUNTED.length) * ACCESS_CODE_COUNT).fill(0);
}

/**
 * Runs a begun pass to its end: the runs merged in key order, each key's records applied in file order by the
 * one rule of a record (apply-records.ts, nextValue), committed a chunk at a time with the pass's progress; then,
 * in one last transaction, every file's ledger entry, sequence number and live counts. A pass resumed after a
 * crash skips the keys its committed chunks wrote.
 */
export async function runPass(dbs: StoreDbs, record: PassRecord, opts: PassOptions): Promise<FileStatus[]> {
  const cursors: RunCursor[] = [];
  running.add(record.id);
  try {
    for (const name of record.runs) cursors.push(new RunCursor(join(dbs.path, record.dir, name)));
    const files = dbs.meta.get(META.sortedPassFiles) as PassFile[];
    const merge = new KeyMerge(cursors);
    const done = record.done;
    if (done) merge.run((i) => Buffer.compare(cursors[i]!.key, done) <= 0);
    const chunk = new ByteWriter(1 << 20);
    for (let more = true; more; ) {
      chunk.reset();
      more = !gatherChunk(merge, chunk, opts.chunkRecords);
      if (chunk.pos === 0) break;
      const t0 = performance.now();
      record = await writeTransaction(dbs, () => applyChunk(dbs, record, files, chunk));
      record.ms += performance.now() - t0;
      opts.onChunk?.(record);
      if (more && opts.stop?.()) throw new PassStopped(record);
    }
    const statuses = await writeTransaction(dbs, () => endPass(dbs, record, files));
    await dbs.root.flushed; // the end on disk before the runs go: a crash before it must find them
    rmSync(join(dbs.path, record.dir), { recursive: true, force: true });
    return statuses;
  } finally {
    for (const c of cursors) c.close();
    running.delete(record.id);
  }
}

/** Copies the next records into `chunk`: at least `count` of them, then up to the end of the last key. True: the runs are spent. */
function gatherChunk(merge: KeyMerge<RunCursor>, chunk: ByteWriter, count: number): boolean {
  let n = 0;
  let [keyAt, keyLen] = [0, 0];
  return merge.run((i) => {
    const c = merge.cursors[i]!;
    if (n >= count && Buffer.compare(c.key, chunk.buf.subarray(keyAt, keyAt + keyLen)) !== 0) return false;
    const at = chunk.pos;
    writeRunRecord(chunk, c, c.file);
    keyLen = c.key.length;
    keyAt = at + varintBytes(keyLen);
    n++;
    return true;
  });
}

function varintBytes(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

/** One chunk, in the caller's transaction: its keys written, the pass's progress with them. Returns the progress. */
function applyChunk(dbs: StoreDbs, record: PassRecord, files: readonly PassFile[], chunk: ByteWriter): PassRecord {
  const access = stillHeld(dbs, record);
  const { holdings } = dbs;
  const counts = new Map<number, FileTally>();
  const out = new ByteWriter();
  const c = new ChunkCursor(chunk.buf, chunk.pos);
  const put = { append: record.append };
  let applied = 0;
  let last: Uint8Array = new Uint8Array(0);
  for (let has = c.next(); has; ) {
    const key = c.key;
    let old: Uint8Array | undefined = record.append ? undefined : holdings.getBinaryFast(key);
    let oldEnd = old ? (holdings as unknown as { lastSize: number }).lastSize : 0;
    let changed = false;
    for (;;) {
      const f = counts.get(c.file) ?? tallyOf(counts, c.file, files[c.file]!, record.firstSeq);
      if (nextValue(old, oldEnd, c, f, out)) changed = true;
      applied++;
      has = c.next();
      if (!has || Buffer.compare(c.key, key) !== 0) break;
      if (changed) {
        // the next record of this key reads what this one left: a copy, since `out` is written again
        old = out.buf.slice(0, out.pos);
        oldEnd = old.length;
      }
    }
    if (changed) holdings.putSync(key, out.view(), put);
    last = key;
  }
  const next: PassRecord = {
    ...record,
    applied: record.applied + applied,
    done: Buffer.from(last),
    counts: [...record.counts],
    access: [...access],
  };
  for (const [file, k] of counts) {
    COUNTED.forEach((name, j) => (next.counts[file * COUNTED.length + j]! += k.counts[name]));
    k.access.forEach((n, c) => (next.access![file * ACCESS_CODE_COUNT + c]! += n));
  }
  dbs.meta.putSync(META.sortedPass, next);
  return next;
}

/** One file's part of a chunk, as nextValue takes it: its events' stamps, its counts and access deltas. */
interface FileTally {
  time: number;
  fileSeq: number;
  counts: RecordCounts;
  access: Int32Array;
}

function tallyOf(tallies: Map<number, FileTally>, file: number, f: PassFile, firstSeq: number): FileTally {
  const counts = { added: 0, updated: 0, removed: 0, unchanged: 0, noopRemovals: 0 };
  const t = { time: f.entry.lastModified, fileSeq: firstSeq + file, counts, access: accessDelta() };
  tallies.set(file, t);
  return t;
}

/** The pass's last transaction: each file's sequence number, ledger entry and live counts, as applying them one by one leaves them. */
function endPass(dbs: StoreDbs, record: PassRecord, files: readonly PassFile[]): FileStatus[] {
  const access = stillHeld(dbs, record);
  const { meta } = dbs;
  const next = (meta.get(META.nextSeq) as number | undefined) ?? 1;
  if (next !== record.firstSeq)
    throw new Error(
      `sorted pass ${record.id}: files were applied beside it (apply sequence ${next}, the pass began at ${record.firstSeq})`,
    );
  const recordedAt = new Date().toISOString();
  const moves: LiveMove[] = [];
  const statuses = files.map((f, i): FileStatus => {
    const seq = record.firstSeq + i;
    const counts = { ...f.entry.counts! };
    COUNTED.forEach((name, j) => (counts[name] = record.counts[i * COUNTED.length + j]!));
    const share = record.records === 0 ? record.ms / files.length : (record.ms * counts.records) / record.records;
    const entry: FileEntry = {
      ...f.entry,
      seq,
      counts,
      timings: { ...f.entry.timings!, applyMs: Math.round(share * 10) / 10 },
      recordedAt,
    };
    dbs.fileSeqs.putSync(seq, entry.key);
    noteApplied(dbs, { platform: entry.platform!, key: entry.key, lastModified: entry.lastModified });
    putFileEntry(dbs, entry);
    const fileAccess = access.slice(i * ACCESS_CODE_COUNT, (i + 1) * ACCESS_CODE_COUNT);
    moves.push({ platform: entry.platform!, live: counts.added - counts.removed, access: fileAccess });
    return { status: 'applied', entry };
  });
  meta.putSync(META.nextSeq, record.firstSeq + files.length);
  addLiveCounts(dbs, moves, record.firstSeq);
  meta.removeSync(META.sortedPass);
  meta.removeSync(META.sortedPassFiles);
  return statuses;
}
