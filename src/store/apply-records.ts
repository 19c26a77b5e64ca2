import type { Database } from 'lmdb';
import type { ByteWriter } from './bytes.ts';
import { RecordCursor, type EncodedRecords } from './encoded-records.ts';
import { layoutOf, sameState, writeLive, writeTombstone } from './holding-codec.ts';
import type { FileCounts } from './ledger.ts';

/**
 * Applies one file's valid records to `holdings` inside the caller's write transaction (docs/interface.md,
 * "Holding states"): a record equal to the stored state writes nothing; a removal leaves a tombstone with the
 * history; every change appends an event stamped with the file's LastModified (never the wall clock) and apply
 * sequence number. The records come encoded (encoded-records.ts), so this loop only reads, compares and writes;
 * the value layout is holding-codec's.
 */
export function applyRecords(
  holdings: Database<Uint8Array, Uint8Array>,
  records: EncodedRecords,
  time: number,
  fileSeq: number,
  counts: FileCounts,
  out: ByteWriter,
): void {
  const rec = new RecordCursor(records.bytes);
  while (rec.next()) {
    // getBinaryFast hands back lmdb-js's shared buffer (valid until the next read); its value ends at lastSize
    const old = holdings.getBinaryFast(rec.key);
    const oldEnd = old ? (holdings as unknown as { lastSize: number }).lastSize : 0;
    const layout = old ? layoutOf(old) : undefined;
    if (!rec.upsert) {
      if (!old || !layout!.live) {
        counts.noopRemovals++;
        continue;
      }
      writeTombstone(out, old, layout!, oldEnd, time, fileSeq);
      holdings.putSync(rec.key, out.view());
      counts.removed++;
      continue;
    }
    let kind: 'added' | 'updated' | 're-added';
    if (!old) kind = 'added';
    else if (!layout!.live) kind = 're-added';
    else if (sameState(old, layout!, rec.bytes, rec.stateStart, rec.stateLen)) {
      counts.unchanged++;
      continue;
    } else kind = 'updated';
    writeLive(out, rec.bytes, rec.stateStart, rec.stateLen, time, old, layout, oldEnd, kind, fileSeq, rec.key);
    holdings.putSync(rec.key, out.view());
    if (kind === 'updated') counts.updated++;
    else counts.added++;
  }
}
