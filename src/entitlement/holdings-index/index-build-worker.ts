/**
 * The entitlement index's build worker (background-build.ts): opens the store read-only and reads every live
 * holding into records exactly as HoldingsIndex.build does on the main thread, posting each segment of records as
 * it fills (BuildProgress); once the store is read and closed, it is sent the segments back (SlotsRequest), makes
 * the slots, and replies with the whole table. While it reads, it holds one segment at most: a thread that holds
 * large buffers lets the garbage of reading the store grow with them (docs/design.md, "The holdings index").
 */
import { Store } from '../../store/index.ts';
import { Arena } from './arena-record.ts';
import type { BuildProgress, BuildReply, BuildRequest, BuiltIndex, SlotsRequest } from './background-build.ts';
import { type BuiltRecords, HoldingsTable } from './holdings-table.ts';
import { readIndexRecords } from './index-build.ts';
import { PlatformNumbers } from './index-value.ts';
import { LinkShapes, type ShapesParts } from './link-shapes.ts';

declare const self: Worker;

/** what the read found, kept until its segments come back */
let read:
  | { seq: number; records: BuiltRecords; platformNames: string[]; shapes: ShapesParts; startedAt: number }
  | undefined;

self.onmessage = async (event: MessageEvent<BuildRequest | SlotsRequest>) => {
  if ('segments' in event.data) return makeSlots(event.data.segments);
  const { dir, env, mapSizeBytes } = event.data;
  let store: Store | undefined;
  let failure: string | undefined;
  try {
    const startedAt = performance.now();
    store = Store.open(dir, env, { mapSizeBytes, readOnly: true });
    const { seq } = store.appliedSeq();
    const numbers = new PlatformNumbers();
    const shapes = new LinkShapes();
    const builder = HoldingsTable.builder((segment, bytes) =>
      progress({ kind: 'segment', segment, bytes }, [bytes.buffer as ArrayBuffer]),
    );
    readIndexRecords(store, numbers, shapes, builder);
    read = { seq, records: builder.seal(), platformNames: numbers.names, shapes: shapes.parts(), startedAt };
  } catch (e) {
    failure = errorText(e);
  }
  // closed before the reply: the main thread ends this worker on it, and must not end it inside LMDB's close
  await store?.close().catch(() => undefined);
  if (failure !== undefined) reply({ ok: false, error: failure });
  else progress({ kind: 'records' }, []);
};

/** The slots for the records read, and the reply with the whole table (its buffers transferred). */
function makeSlots(segments: Uint8Array[]): void {
  let built: BuiltIndex;
  try {
    const { seq, records, platformNames, shapes, startedAt } = read!;
    const table = HoldingsTable.ofRecords(new Arena(segments, records.filled), records.count, records.used);
    built = { seq, table: table.parts(), platformNames, shapes, ms: performance.now() - startedAt };
  } catch (e) {
    return reply({ ok: false, error: errorText(e) });
  }
  reply({ ok: true, built }, [
    ...built.table.segments.map((s) => s.buffer as ArrayBuffer),
    built.table.slots.buffer as ArrayBuffer,
  ]);
}

function progress(p: BuildProgress, transfer: ArrayBuffer[]): void {
  self.postMessage({ progress: p }, transfer);
}

function reply(r: BuildReply, transfer: ArrayBuffer[] = []): void {
  self.postMessage(r, transfer);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
