import { parseDepositFile, parseDepositPath } from '../deposit/index.ts';
import type { Fault } from '../fault.ts';
import { encodeRecords } from '../store/encoded-records.ts';
import type { PreparedFile } from '../store/index.ts';
import type { PrepareReply, PrepareRequest } from './prepare-messages.ts';
import { readBucketFile, type BucketFile } from './read-bucket-file.ts';

/** File-level faults that may be a file still being written: retried before they quarantine the file. */
export const RECOVERABLE_FILE_FAULTS = new Set(['GZIP_TRUNCATED']);

/** Path rules, then gunzip + parse: a file ready for the store, or the fault that stops the whole file. */
export async function prepareFile(
  file: BucketFile,
  platforms: ReadonlySet<string>,
  maxDecompressedBytes: number,
  tries: number,
): Promise<PreparedFile | (Fault & { platform?: string })> {
  const path = parseDepositPath(file.key, platforms);
  if ('code' in path) return path;
  const t0 = performance.now();
  const parsed = await parseDepositFile(file.bytes, { maxDecompressedBytes });
  const parseMs = round(performance.now() - t0);
  if ('code' in parsed) return { ...parsed, platform: path.platform };
  return {
    key: file.key,
    platform: path.platform,
    size: file.size,
    hash: file.hash,
    lastModified: file.lastModified,
    parsed,
    timings: { readMs: 0, parseMs },
    tries,
  };
}

/**
 * Read + hash + parse + encode of one bucket file, as the reply the Ingestor expects: the prepare worker and its
 * inline fallback both run this.
 */
export async function prepareBucketFile(input: PrepareRequest): Promise<PrepareReply> {
  const { id, root, key } = input;
  try {
    const t0 = performance.now();
    const file = await readBucketFile(root, key);
    const readMs = round(performance.now() - t0);
    const meta = { key, size: file.size, hash: file.hash, lastModified: file.lastModified };
    const prepared = await prepareFile(file, new Set(input.platforms), input.maxDecompressedBytes, input.tries);
    if ('code' in prepared) return { id, kind: 'fault', file: meta, fault: prepared };
    prepared.encoded = encodeRecords(prepared.parsed.records, prepared.platform);
    prepared.timings.readMs = readMs;
    return { id, kind: 'prepared', file: meta, prepared };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { id, kind: 'readError', code: err.code ?? 'EIO', message: err.message };
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
