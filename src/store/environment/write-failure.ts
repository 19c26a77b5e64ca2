import { statfsSync } from 'node:fs';
import { type Fault, FaultError, fault } from '../../base/index.ts';
import type { StoreDbs } from './environment.ts';

/**
 * Why a write transaction of the store failed, and the one way the store runs one (docs/design.md, "Durability":
 * "When the store cannot write"). A full map and a full filesystem do not pass by themselves: each gets its own
 * code, and a message that tells the operator what to do.
 */
export type StoreWriteCode = 'STORE_FULL' | 'DISK_FULL' | 'APPLY_FAILED';

/** A write transaction that failed, nothing of it committed; `fault` says why (classifyStoreError). */
export class StoreWriteError extends FaultError {
  constructor(override readonly fault: Fault<StoreWriteCode>) {
    super(fault);
  }
}

/** lmdb-js gives LMDB's return code as `code`: MDB_MAP_FULL, or an errno such as ENOSPC */
const MDB_MAP_FULL = -30792;
const ENOSPC = 28;
const EDQUOT = 122;
const EIO = 5;
/**
 * LMDB turns a short write (some bytes written, then no room) into EIO. An EIO while the store's filesystem has
 * less than this available is taken for a full disk; with more, it is a disk error (APPLY_FAILED).
 */
export const LOW_SPACE_BYTES = 64 * 1024 * 1024;

/** Bytes available to this process on the filesystem holding `path` (undefined when it cannot be asked). */
function availableBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return undefined;
  }
}

/**
 * The one rule that names a failed store write: the LMDB map is full (MDB_MAP_FULL) -> STORE_FULL; the filesystem
 * is full (ENOSPC, EDQUOT, or an EIO with under LOW_SPACE_BYTES available) -> DISK_FULL; anything else ->
 * APPLY_FAILED. `storePath` is the environment's store folder; the message names it and does not name a file.
 */
export function classifyStoreError(
  error: unknown,
  storePath: string,
  available: (path: string) => number | undefined = availableBytes,
): Fault<StoreWriteCode> {
  const code = (error as { code?: unknown } | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  if (code === MDB_MAP_FULL || /MDB_MAP_FULL/.test(text))
    return fault(
      'STORE_FULL',
      `the store's LMDB map is full (MDB_MAP_FULL) at ${storePath}: raise store.mapSizeGiB in the config and restart the daemon; ` +
        'then --retry the quarantined files',
    );
  const free = available(storePath);
  const freeText = free === undefined ? 'unknown space' : `${formatBytes(free)}`;
  if (code === ENOSPC || code === EDQUOT || /No space left on device|Disk quota exceeded/i.test(text))
    return fault(
      'DISK_FULL',
      `no space left for the store at ${storePath} (${text}; ${freeText} available): free space on its filesystem; then --retry the quarantined files`,
    );
  if ((code === EIO || /Input\/output error/i.test(text)) && free !== undefined && free < LOW_SPACE_BYTES)
    return fault(
      'DISK_FULL',
      `the store at ${storePath} could not write (${text}) and its filesystem has ${freeText} available: free space there; then --retry the quarantined files`,
    );
  return fault('APPLY_FAILED', `the store transaction failed: ${text}`);
}

/** The store's fault for any error a write threw (a StoreWriteError carries it; anything else is APPLY_FAILED). */
export function storeWriteFault(error: unknown): Fault<StoreWriteCode> {
  if (error instanceof StoreWriteError) return error.fault;
  return fault(
    'APPLY_FAILED',
    `the store transaction failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/**
 * Runs `fn` in one write transaction, all of it or nothing: a child transaction, because lmdb-js commits what an
 * async transaction's callback wrote before it threw. A failure is thrown as a StoreWriteError. lmdb-js reports a
 * failed commit as "Commit failed" with the cause in a second promise (commitError), which is read here, and after
 * a failed commit it leaves its flush promise pending, so that close() would wait forever: an empty transaction
 * (it writes nothing, so it commits on a full disk too) settles it.
 */
export async function writeTransaction<T>({ root, path }: Pick<StoreDbs, 'root' | 'path'>, fn: () => T): Promise<T> {
  try {
    return (await root.childTransaction(fn)) as T;
  } catch (e) {
    const cause = await commitCause(e);
    await root.transaction(() => undefined).catch(() => undefined);
    throw new StoreWriteError(classifyStoreError(cause, path));
  }
}

/** The real error behind lmdb-js's "Commit failed (see commitError for details)"; the error itself otherwise. */
async function commitCause(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: PromiseLike<unknown> } | undefined)?.commitError;
  if (!pending || typeof pending.then !== 'function') return e;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // lmdb-js rejects it right after the commit's own promise; the bound only guards against a version that does not
  const bound = new Promise<unknown>((resolve) => (timer = setTimeout(() => resolve(e), 5000)));
  try {
    return await Promise.race([
      Promise.resolve(pending).then(
        () => e,
        (cause: unknown) => cause,
      ),
      bound,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${Math.round(n / 1024)} KiB`;
}
