/**
 * The Updates API index's read worker (updates-index.ts): opens the store read-only, reads the whole table as
 * the main thread does (readUpdatesTable), and sends its buffers back.
 */
import type { WorkerReply } from '../worker-script.ts';
import { openEnvironment } from './environment.ts';
import { readUpdatesTable, type BuiltTable, type StoreLocation } from './updates-index.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<StoreLocation>) => {
  const { path, mapSizeBytes } = event.data;
  let built: BuiltTable | undefined;
  let error = '';
  let root: { close(): Promise<void> } | undefined;
  try {
    const dbs = openEnvironment(path, { mapSizeBytes, readOnly: true });
    root = dbs.root;
    built = readUpdatesTable(dbs);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  // closed before the reply: the main thread ends this worker on it, and must not end it inside LMDB's close
  await root?.close().catch(() => undefined);
  if (!built) return self.postMessage({ ok: false, error } satisfies WorkerReply<BuiltTable>);
  const p = built.parts;
  self.postMessage({ ok: true, built } satisfies WorkerReply<BuiltTable>, [p.keyBytes.buffer, p.keyStart.buffer, p.hashes.buffer, p.values.buffer, p.valueStart.buffer, p.slots.buffer] as ArrayBuffer[]);
};
