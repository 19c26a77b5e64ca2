/**
 * The store's read worker: opens the store read-only and makes one of the reads that the main thread makes too
 * (readUpdatesTable for the Updates API's index, readPrefixParts for the private lookup), then sends its buffers
 * back, transferred, not copied.
 */
import type { WorkerReply } from '../../base/index.ts';
import { openEnvironment } from '../environment/index.ts';
import { readThenClose, type StoreRead, type StoreReadRequest } from '../read-models/index.ts';
import { type PrefixParts, readPrefixParts } from './prefix-index.ts';
import { type BuiltTable, readUpdatesTable } from './updates-index.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<StoreReadRequest>) => {
  const { path, mapSizeBytes, kind } = event.data;
  const reply: WorkerReply<BuiltTable | StoreRead<PrefixParts>> = await readThenClose(
    () => openEnvironment(path, { mapSizeBytes, readOnly: true }),
    (dbs) => (kind === 'updates' ? readUpdatesTable(dbs) : readPrefixParts(dbs)),
    (dbs) => dbs.root.close(),
  );
  self.postMessage(reply, reply.ok ? (transferList(reply.built) as ArrayBuffer[]) : []);
};

function transferList(built: BuiltTable | StoreRead<PrefixParts>): ArrayBufferLike[] {
  if ('parts' in built) {
    const p = built.parts;
    return [
      p.keyBytes.buffer,
      p.keyStart.buffer,
      p.hashes.buffer,
      p.values.buffer,
      p.valueStart.buffer,
      p.slots.buffer,
    ];
  }
  const p = built.value;
  return [p.hashes.buffer, p.items.buffer, p.itemStart.buffer, p.list.json.buffer, p.list.gzip.buffer];
}
