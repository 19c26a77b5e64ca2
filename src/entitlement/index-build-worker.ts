/**
 * The entitlement index's build worker (background-build.ts): opens the store read-only, reads every live holding
 * into a table exactly as HoldingsIndex.build does on the main thread, and sends the table's buffers back.
 */
import { Store } from '../store/index.ts';
import type { BuildReply, BuildRequest } from './background-build.ts';
import { HoldingsIndex } from './holdings-index.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<BuildRequest>) => {
  const { dir, env, mapSizeBytes } = event.data;
  let store: Store | undefined;
  let index: HoldingsIndex | undefined;
  let reply: BuildReply;
  try {
    store = Store.open(dir, env, { mapSizeBytes, readOnly: true });
    index = new HoldingsIndex(store);
    index.build();
    reply = { ok: true, built: index.exported() };
  } catch (e) {
    reply = { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  index?.close();
  // closed before the reply: the main thread ends this worker on it, and must not end it inside LMDB's close
  await store?.close().catch(() => undefined);
  if (reply.ok) {
    const { segments, slots } = reply.built.table;
    self.postMessage(reply, [...segments.map((s) => s.buffer as ArrayBuffer), slots.buffer as ArrayBuffer]);
  }
  else self.postMessage(reply);
};
