import type { Database } from 'lmdb';
import type { ByteWriter } from './bytes.ts';
import { RecordCursor, type EncodedRecords } from './encoded-records.ts';
import { layoutOf, sameState, writeLive, writeTombstone } from './holding-codec.ts';
import type { FileCounts } from './ledger.ts';

/** One file's records as they apply: its LastModified and apply sequence number stamp its events; its counts. */
export interface FileInPass {
  records: EncodedRecords;
  time: number;
  fileSeq: number;
  counts: FileCounts;
}

/**
 * Applies files' valid records to `holdings` inside the caller's write transaction (docs/interface.md, "Holding
 * states"), as applying them one file after another would, but written in key order: the files' records (each
 * file's already in key order, one per key) are merged, and one key's records apply in the files' order. Every
 * record reads the state the one before it left, so the holdings, their events and each file's counts are those of
 * the files applied one at a time; only the order of the puts differs, and key order dirties each B-tree page once
 * (docs/design.md, "A backlog in one pass").
 */
export function applyFilesRecords(holdings: Database<Uint8Array, Uint8Array>, files: readonly FileInPass[], out: ByteWriter): void {
  const cursors = files.map((f) => new RecordCursor(f.records.bytes));
  // a binary heap of the files whose cursor holds a record, by (key, file order)
  const heap: number[] = [];
  const before = (a: number, b: number) => {
    const c = Buffer.compare(cursors[a]!.key, cursors[b]!.key);
    return c < 0 || (c === 0 && a < b);
  };
  const down = (i: number) => {
    for (;;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  cursors.forEach((c, i) => c.next() && heap.push(i));
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0) {
    const i = heap[0]!;
    applyRecord(holdings, cursors[i]!, files[i]!, out);
    if (!cursors[i]!.next()) {
      const last = heap.pop()!;
      if (heap.length === 0) break;
      heap[0] = last;
    }
    down(0);
  }
}

/**
 * One record: a record equal to the stored state writes nothing; a removal leaves a tombstone with the history;
 * every change appends an event stamped with the file's LastModified (never the wall clock) and apply sequence
 * number. The records come encoded (encoded-records.ts), so this only reads, compares and writes; the value layout
 * is holding-codec's.
 */
function applyRecord(holdings: Database<Uint8Array, Uint8Array>, rec: RecordCursor, f: FileInPass, out: ByteWriter): void {
  const { counts, time, fileSeq } = f;
  // getBinaryFast hands back lmdb-js's shared buffer (valid until the next read); its value ends at lastSize
  const old = holdings.getBinaryFast(rec.key);
  const oldEnd = old ? (holdings as unknown as { lastSize: number }).lastSize : 0;
  const layout = old ? layoutOf(old) : undefined;
  if (!rec.upsert) {
    if (!old || !layout!.live) {
      counts.noopRemovals++;
      return;
    }
    writeTombstone(out, old, layout!, oldEnd, time, fileSeq);
    holdings.putSync(rec.key, out.view());
    counts.removed++;
    return;
  }
  let kind: 'added' | 'updated' | 're-added';
  if (!old) kind = 'added';
  else if (!layout!.live) kind = 're-added';
  else if (sameState(old, layout!, rec.bytes, rec.stateStart, rec.stateLen)) {
    counts.unchanged++;
    return;
  } else kind = 'updated';
  writeLive(out, rec.bytes, rec.stateStart, rec.stateLen, time, old, layout, oldEnd, kind, fileSeq, rec.key);
  holdings.putSync(rec.key, out.view());
  if (kind === 'updated') counts.updated++;
  else counts.added++;
}
