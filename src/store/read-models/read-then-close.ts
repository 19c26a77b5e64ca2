import type { WorkerReply } from '../../base/index.ts';

/**
 * The worker side of a read model rebuilt from the store on another thread, the one for every index that does
 * so (the Updates API's table and the private lookup's prefixes: store/updates/read-worker.ts; the entitlement
 * index: entitlement/holdings-index/index-build-worker.ts): the store opened read-only, read, and closed before
 * the reply is made. The main thread ends the worker on its reply, and must not end it inside LMDB's close.
 */
export async function readThenClose<S, T>(
  open: () => S,
  read: (opened: S) => T,
  close: (opened: S) => Promise<void>,
): Promise<WorkerReply<T>> {
  let opened: S | undefined;
  let reply: WorkerReply<T>;
  try {
    opened = open();
    reply = { ok: true, built: read(opened) };
  } catch (e) {
    reply = { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  if (opened !== undefined) await close(opened).catch(() => undefined);
  return reply;
}
