import { workerJob, workerScript } from '../../base/index.ts';

/** Where a read on another thread opens the store (read-only: LMDB shares it between threads). */
export interface StoreLocation {
  path: string;
  mapSizeBytes: number;
}

/** What the store's read worker is asked: which read, of which store. */
export interface StoreReadRequest extends StoreLocation {
  kind: 'updates' | 'prefixes';
}

/** One read on a new worker thread (store/updates/read-worker.ts); its buffers are transferred, not copied. */
export function storeReadJob<T>(
  request: StoreReadRequest,
  name: string,
  script = workerScript('store/updates/read-worker.ts'),
): { done: Promise<T>; cancel(): void } {
  return workerJob<T>(script, request, name);
}
