import type { Database } from 'lmdb';
import type { EncodedRecords } from './encoded-records.ts';
import { ByteReader, type ByteWriter } from './bytes.ts';
import { accessCodeOfValue, layoutOf, writeEvent, type EventKind } from './holding-codec.ts';
import type { FileCounts } from './ledger-types.ts';

/**
 * Applies one file's valid records to `holdings` inside the caller's write transaction (interface section 3):
 * a record equal to the stored state writes nothing; a removal leaves a tombstone with the history; every change
 * appends an event stamped with the file's LastModified (never the wall clock) and apply sequence number.
 * The records come encoded (encoded-records.ts): keys and states are already bytes, so this loop only reads,
 * compares and writes.
 */
export function applyRecords(
  holdings: Database<Uint8Array, Uint8Array>,
  records: EncodedRecords,
  time: number,
  fileSeq: number,
  counts: FileCounts,
  out: ByteWriter,
): void {
  const bytes = records.bytes;
  const r = new ByteReader(bytes);
  while (r.pos < bytes.length) {
    const keyLen = r.varint();
    const k = bytes.subarray(r.pos, r.pos + keyLen);
    r.pos += keyLen;
    const upsert = r.u8() === 1;
    const stateLen = r.u24();
    const stateStart = r.pos;
    r.pos += stateLen;
    // getBinaryFast hands back lmdb-js's shared buffer (valid until the next read); its value ends at lastSize
    const old = holdings.getBinaryFast(k);
    const oldEnd = old ? (holdings as unknown as { lastSize: number }).lastSize : 0;
    const layout = old ? layoutOf(old) : undefined;
    if (!upsert) {
      if (!old || !layout!.live) {
        counts.noopRemovals++;
        continue;
      }
      out.reset();
      out.u8(0);
      out.varint(0);
      out.u48(time);
      out.copy(old, layout!.eventsStart, oldEnd);
      writeEvent(out, 'removed', time, fileSeq, accessCodeOfValue(old, layout!), 0);
      holdings.putSync(k, out.view());
      counts.removed++;
      continue;
    }
    let kind: EventKind;
    if (!old) kind = 'added';
    else if (!layout!.live) kind = 're-added';
    else if (sameBytes(old, layout!.stateStart, layout!.stateEnd, bytes, stateStart, stateLen)) {
      counts.unchanged++;
      continue;
    } else kind = 'updated';
    out.reset();
    out.u8(1);
    out.varint(stateLen);
    out.copy(bytes, stateStart, stateStart + stateLen);
    out.u48(time);
    if (old) out.copy(old, layout!.eventsStart, oldEnd);
    writeEvent(out, kind, time, fileSeq, old ? accessCodeOfValue(old, layout!) : 0, bytes[stateStart]!);
    holdings.putSync(k, out.view());
    if (kind === 'updated') counts.updated++;
    else counts.added++;
  }
}

function sameBytes(old: Uint8Array, start: number, end: number, b: Uint8Array, bStart: number, bLen: number): boolean {
  if (end - start !== bLen) return false;
  for (let i = 0; i < bLen; i++) if (old[start + i] !== b[bStart + i]) return false;
  return true;
}
