/**
 * The store's read worker: opens the store read-only and makes one of the reads that the main thread makes too
 * (readUpdatesTable for the Updates API's index, readPrefixParts for the private lookup), then sends its buffers
 * back, transferred, not copied.
 */
import type { WorkerReply } from '../../base/index.ts';
import { openEnvironment } from '../environment/index.ts';
import type { StoreRead, StoreReadRequest } from '../read-models/index.ts';
import { type PrefixParts, readPrefixParts } from './prefix-index.ts';
import { type BuiltTable, readUpdatesTable } from './updates-index.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<StoreReadRequest>) => {
  const { path, mapSizeBytes, kind } = event.data;
  let built: BuiltTable | StoreRead<PrefixParts> | undefined;
  let error = '';
  let root: { close(): Promise<void> } | undefined;
  try {
    const dbs = openEnvironment(path, { mapSizeBytes, readOnly: true });
    root = dbs.root;
    built = kind === 'updates' ? readUpdatesTable(dbs) : readPrefixParts(dbs);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  // closed before the reply: the main thread ends this worker on it, and must not end it inside LMDB's close
  await root?.close().catch(() => undefined);
  if (!built) return self.postMessage({ ok: false, error } satisfies WorkerReply<never>);
  self.postMessage({ ok: true, built }, transferList(built) as ArrayBuffer[]);
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
