/**
 * The ingest worker: reads, hashes, gunzips, parses, validates and encodes deposit files on the second core,
 * while the main thread applies the previous batch to LMDB. Results come back as a PreparedFile whose records
 * are one transferred buffer (the parsed record objects are not sent: cloning them would cost what was saved).
 */
import { encodeRecords } from '../store/encoded-records.ts';
import { prepareFile } from './prepare.ts';
import { readBucketFile } from './read-bucket-file.ts';
import type { PrepareReply, PrepareRequest } from './prepare-messages.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<PrepareRequest>) => {
  const { id, root, key, platforms, maxDecompressedBytes, tries } = event.data;
  let reply: PrepareReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const t0 = performance.now();
    const file = await readBucketFile(root, key);
    const readMs = Math.round((performance.now() - t0) * 10) / 10;
    const meta = { key, size: file.size, hash: file.hash, lastModified: file.lastModified };
    const prepared = await prepareFile(file, new Set(platforms), maxDecompressedBytes, tries);
    if ('code' in prepared) reply = { id, kind: 'fault', file: meta, fault: prepared };
    else {
      const encoded = encodeRecords(prepared.parsed.records, prepared.platform);
      prepared.parsed.records = [];
      prepared.encoded = encoded;
      prepared.timings.readMs = readMs;
      reply = { id, kind: 'prepared', file: meta, prepared };
      transfer = [encoded.bytes.buffer as ArrayBuffer];
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    reply = { id, kind: 'readError', code: err.code ?? 'EIO', message: err.message };
  }
  self.postMessage(reply, transfer);
};
