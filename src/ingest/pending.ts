import { applyOrder } from '../deposit/index.ts';
import type { PreparedFile } from '../store/index.ts';

/** A file in the ingestor's queue: submitted, or waiting for a retry. */
export interface Pending {
  key: string;
  lastModified: number;
  /** bytes as stored in the bucket (a batch's bound: backlogBatch) */
  size: number;
  /** tries made so far */
  tries: number;
  /** not before (ms, from the injected clock) */
  due: number;
  retry?: boolean;
}

/** The order files apply in: (LastModified, key), or for `--ingest` the order given. */
export type FileOrder = (a: { key: string; lastModified: number }, b: { key: string; lastModified: number }) => number;

/** A retry is never put off longer than this (a file kept while the store cannot record its quarantine). */
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/** The pause after try number `tries`: `baseMs` doubled per try, at most MAX_RETRY_DELAY_MS. */
export function retryDelayMs(baseMs: number, tries: number): number {
  return Math.min(baseMs * 2 ** (tries - 1), MAX_RETRY_DELAY_MS);
}

/** A prepared file that was not tried, back in the queue as it was (it is read and parsed again later). */
export function untried(f: PreparedFile): Pending {
  return { key: f.key, lastModified: f.lastModified, size: f.size, tries: f.tries - 1, due: 0, retry: f.retry };
}

/** A prepared file as it stands in the queue, its tries counted (kept for a retry after a failed apply). */
export function tried(f: PreparedFile): Pending {
  return { key: f.key, lastModified: f.lastModified, size: f.size, tries: f.tries, due: 0, retry: f.retry };
}

/** A file version as its stat names it (size and LastModified). */
export function versionOf(s: { size: number; lastModified: number }): string {
  return `${s.size}:${s.lastModified}`;
}

/** An earlier file is pending (waiting for its retry): `f` must not be applied before it. */
export function heldBack(pending: Iterable<Pending>, f: PreparedFile, order: FileOrder = applyOrder): boolean {
  for (const q of pending) if (order(q, f) < 0) return true;
  return false;
}
