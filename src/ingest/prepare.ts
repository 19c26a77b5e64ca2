import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Fault, type FileFaultCode, fault } from '../base/index.ts';
import { type DepositPath, mostRawBytes, parseDepositFile, parseDepositPath, rawSizeFault } from '../deposit/index.ts';
// the worker runs this module: it takes the encoder alone, not the store (and lmdb) behind the store's index
import { encodeRecords } from '../store/holdings/index.ts';
import type { PreparedFile } from '../store/index.ts';
import type { PrepareReply, PrepareRequest } from './prepare-messages.ts';
import { type BucketFile, hashBucketFile, notRegularFile, readBucketFile, readFault } from './read-bucket-file.ts';

/**
 * Gunzip + parse of a file whose path passed the rules: a file ready for the store, or the fault that stops the
 * whole file. Every fault's message names the file (the ledger keeps it as it is).
 */
async function prepareFile(
  file: BucketFile,
  path: DepositPath,
  maxDecompressedBytes: number,
  tries: number,
): Promise<PreparedFile | { fault: Fault<FileFaultCode>; platform: string }> {
  const t0 = performance.now();
  const parsed = await parseDepositFile(file.bytes, { maxDecompressedBytes });
  const parseMs = round(performance.now() - t0);
  if ('code' in parsed) return { fault: fault(parsed.code, `${file.key}: ${parsed.message}`), platform: path.platform };
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
 * Path check, then read + hash + parse + encode of one bucket file, as the reply the Ingestor expects: the
 * prepare worker and its inline fallback both run this. A file refused for its path is hashed as a stream, not
 * read whole, so the ledger knows its content whatever its size. What is not a regular file is refused unread.
 */
export async function prepareBucketFile(input: PrepareRequest): Promise<PrepareReply> {
  const { id, root, key } = input;
  try {
    const special = await notRegularFile(root, key);
    if (special) return { id, kind: 'fault', file: special.file, fault: special.fault };
    const path =
      input.readBackAs !== undefined
        ? { platform: input.readBackAs, name: key, key }
        : parseDepositPath(key, new Set(input.platforms));
    if ('code' in path) return { id, kind: 'fault', file: await hashBucketFile(root, key), fault: path };
    const tooLarge = rawSizeFault(key, (await lstat(join(root, key))).size, input.maxDecompressedBytes);
    if (tooLarge)
      return { id, kind: 'fault', file: await hashBucketFile(root, key), fault: tooLarge, platform: path.platform };
    const t0 = performance.now();
    const file = await readBucketFile(root, key, mostRawBytes(input.maxDecompressedBytes));
    const readMs = round(performance.now() - t0);
    const identity = { key, size: file.size, hash: file.hash, lastModified: file.lastModified };
    const prepared = await prepareFile(file, path, input.maxDecompressedBytes, input.tries);
    if ('fault' in prepared)
      return { id, kind: 'fault', file: identity, fault: prepared.fault, platform: prepared.platform };
    prepared.encoded = encodeRecords(prepared.parsed.records, prepared.platform);
    prepared.timings.readMs = readMs;
    return { id, kind: 'prepared', file: identity, prepared };
  } catch (e) {
    // a read that failed; anything else thrown here would be a bug, and is retried and reported the same way
    return { id, kind: 'readError', fault: readFault(key, e) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
