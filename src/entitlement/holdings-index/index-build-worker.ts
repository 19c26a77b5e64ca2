/**
 * The entitlement index's build worker (background-build.ts): opens the store read-only and reads every live
 * holding into records exactly as HoldingsIndex.build does on the main thread, posting each segment of records as
 * it fills (BuildProgress); once the store is read and closed, it is sent the segments back (SlotsRequest), makes
 * the slots, and replies with the whole table. While it reads, it holds one segment at most: a thread that holds
 * large buffers lets the garbage of reading the store grow with them (docs/design.md, "The holdings index").
 */
import { readThenClose, Store } from '../../store/index.ts';
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
  const startedAt = performance.now();
  const done = await readThenClose(
    () => Store.open(dir, env, { mapSizeBytes, readOnly: true }),
    (store) => {
      const { seq } = store.appliedSeq();
      const numbers = new PlatformNumbers();
      const shapes = new LinkShapes();
      const builder = HoldingsTable.builder((segment, bytes) =>
        progress({ kind: 'segment', segment, bytes }, [bytes.buffer as ArrayBuffer]),
      );
      readIndexRecords(store, numbers, shapes, builder);
      return { seq, records: builder.seal(), platformNames: numbers.names, shapes: shapes.parts(), startedAt };
    },
    (store) => store.close(),
  );
  if (!done.ok) return reply(done);
  read = done.built;
  progress({ kind: 'records' }, []);
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
