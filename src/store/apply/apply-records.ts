import type { Database } from 'lmdb';
import type { ByteWriter } from '../../bytes/index.ts';
import {
  type EncodedRecords,
  layoutOf,
  RecordCursor,
  sameState,
  writeLive,
  writeTombstone,
} from '../holdings/index.ts';
import type { FileCounts } from '../ledger/index.ts';
import { KeyMerge } from './key-merge.ts';

/**
 * One file's records as they apply: its LastModified and apply sequence number stamp its events; its counts, and
 * beside them (the ledger's FileCounts keep their shape) the live holdings it moved per access code (live-counts.ts).
 */
export interface FileInPass {
  records: EncodedRecords;
  time: number;
  fileSeq: number;
  counts: FileCounts;
  access: Int32Array;
}

/**
 * Applies files' valid records to `holdings` inside the caller's write transaction (docs/interface.md, "Holding
 * states"), as applying them one file after another would, but written in key order: the files' records (each
 * file's already in key order, one per key) are merged, and one key's records apply in the files' order. Every
 * record reads the state the one before it left, so the holdings, their events and each file's counts are those of
 * the files applied one at a time; only the order of the puts differs, and key order dirties each B-tree page once
 * (docs/design.md, "A backlog in one pass").
 */
export function applyFilesRecords(
  holdings: Database<Uint8Array, Uint8Array>,
  files: readonly FileInPass[],
  out: ByteWriter,
): void {
  const merge = new KeyMerge(files.map((f) => new RecordCursor(f.records.bytes)));
  merge.run((i) => applyRecord(holdings, merge.cursors[i]!, files[i]!, out));
}

/** The counts a record moves (a file's FileCounts has them). */
export type RecordCounts = Pick<FileCounts, 'added' | 'updated' | 'removed' | 'unchanged' | 'noopRemovals'>;

/** One record as a cursor holds it (encoded-records.ts): the holding key, removal or upsert, its state bytes. */
export interface RecordView {
  key: Uint8Array;
  upsert: boolean;
  bytes: Uint8Array;
  stateStart: number;
  stateLen: number;
}

/** One record applied to the store's value of its key, inside the caller's write transaction. */
function applyRecord(
  holdings: Database<Uint8Array, Uint8Array>,
  rec: RecordView,
  f: FileInPass,
  out: ByteWriter,
): void {
  // getBinaryFast hands back lmdb-js's shared buffer (valid until the next read); its value ends at lastSize
  const old = holdings.getBinaryFast(rec.key);
  const oldEnd = old ? (holdings as unknown as { lastSize: number }).lastSize : 0;
  if (nextValue(old, oldEnd, rec, f, out)) holdings.putSync(rec.key, out.view());
}

/**
 * What one record makes of a holding's value `old` (bytes [0, oldEnd); undefined: no value yet): true with the
 * new value in `out`, or false when nothing is to be written. A record equal to the stored state writes nothing;
 * a removal leaves a tombstone with the history; every change appends an event stamped with the file's
 * LastModified (never the wall clock) and apply sequence number. Counts the record in the file's counts, and the
 * live holdings it moves in `access` (by access code: a state's first byte, holding-codec.ts). The records come
 * encoded (encoded-records.ts), so this only reads, compares and writes; the value layout is
 * holding-codec's. The one rule of a record, for passes (above) and sorted passes (sorted-pass/) alike.
 */
export function nextValue(
  old: Uint8Array | undefined,
  oldEnd: number,
  rec: RecordView,
  f: { time: number; fileSeq: number; counts: RecordCounts; access: Int32Array },
  out: ByteWriter,
): boolean {
  const { counts, time, fileSeq, access } = f;
  const layout = old ? layoutOf(old) : undefined;
  if (!rec.upsert) {
    if (!old || !layout!.live) {
      counts.noopRemovals++;
      return false;
    }
    writeTombstone(out, old, layout!, oldEnd, time, fileSeq);
    counts.removed++;
    access[old[layout!.stateStart]!]!--;
    return true;
  }
  let kind: 'added' | 'updated' | 're-added';
  if (!old) kind = 'added';
  else if (!layout!.live) kind = 're-added';
  else if (sameState(old, layout!, rec.bytes, rec.stateStart, rec.stateLen)) {
    counts.unchanged++;
    return false;
  } else kind = 'updated';
  writeLive(out, rec.bytes, rec.stateStart, rec.stateLen, time, old, layout, oldEnd, kind, fileSeq, rec.key);
  if (kind === 'updated') {
    counts.updated++;
    access[old![layout!.stateStart]!]!--; // and counted again under its new code, the same one or not
  } else counts.added++;
  access[rec.bytes[rec.stateStart]!]!++;
  return true;
}
