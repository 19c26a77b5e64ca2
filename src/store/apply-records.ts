import type { Database } from 'lmdb';
import type { ParsedRecord } from '../deposit/index.ts';
import { accessOfState, ByteWriter, layoutOf, writeState, type EventKind } from './holding-codec.ts';
import { holdingKey } from './holding-key.ts';
import type { FileCounts } from './ledger-types.ts';

/**
 * Applies one file's valid records to `holdings` inside the caller's write transaction (interface section 3):
 * a record equal to the stored state writes nothing; a removal leaves a tombstone with the history; every change
 * appends an event stamped with the file's LastModified (never the wall clock) and apply sequence number.
 */
export function applyRecords(
  holdings: Database<Uint8Array, Uint8Array>,
  records: readonly ParsedRecord[],
  platform: string,
  time: number,
  fileSeq: number,
  counts: FileCounts,
  state: ByteWriter,
  out: ByteWriter,
): void {
  for (const { key, record } of records) {
    const k = holdingKey(key, platform);
    const old = readFast(holdings, k);
    const layout = old ? layoutOf(old) : undefined;
    if (record.deleted === true) {
      if (!old || !layout!.live) {
        counts.noopRemovals++;
        continue;
      }
      out.reset();
      out.u8(0);
      out.varint(0);
      out.u48(time);
      out.bytes(old.subarray(layout!.eventsStart));
      out.event({ kind: 'removed', time, fileSeq, oldAccess: accessOfState(old, layout!) });
      holdings.putSync(k, out.view());
      counts.removed++;
      continue;
    }
    state.reset();
    writeState(state, key, record.doi, record.accessType, record.vor);
    let kind: EventKind;
    if (!old) kind = 'added';
    else if (!layout!.live) kind = 're-added';
    else if (sameBytes(old, layout!.stateStart, layout!.stateEnd, state)) {
      counts.unchanged++;
      continue;
    } else kind = 'updated';
    out.reset();
    out.u8(1);
    out.varint(state.pos);
    out.bytes(state.buf.subarray(0, state.pos));
    out.u48(time);
    if (old) out.bytes(old.subarray(layout!.eventsStart));
    out.event({ kind, time, fileSeq, oldAccess: old ? accessOfState(old, layout!) : undefined, newAccess: record.accessType });
    holdings.putSync(k, out.view());
    if (kind === 'updated') counts.updated++;
    else counts.added++;
  }
}

function sameBytes(old: Uint8Array, start: number, end: number, w: ByteWriter): boolean {
  if (end - start !== w.pos) return false;
  const b = w.buf;
  for (let i = 0; i < w.pos; i++) if (old[start + i] !== b[i]) return false;
  return true;
}

/** getBinaryFast may hand back lmdb-js's shared buffer, longer than the value: cut it to the value's size.
 * The bytes are valid until the next read, which is all this loop needs. */
function readFast(db: Database<Uint8Array, Uint8Array>, key: Uint8Array): Uint8Array | undefined {
  const raw = db.getBinaryFast(key);
  return raw && raw.subarray(0, (db as unknown as { lastSize: number }).lastSize);
}
