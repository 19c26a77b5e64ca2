/**
 * The ingest worker: reads, hashes, gunzips, parses, validates and encodes deposit files on the second core,
 * while the main thread applies the previous batch to LMDB. Results come back as a PreparedFile whose records
 * are one transferred buffer (the parsed record objects are not sent: cloning them would cost what was saved).
 */
import type { PrepareRequest } from './prepare-messages.ts';
import { prepareBucketFile } from './prepare.ts';

declare const self: Worker;

self.onmessage = async (event: MessageEvent<PrepareRequest>) => {
  const reply = await prepareBucketFile(event.data);
  if (reply.kind !== 'prepared') return self.postMessage(reply);
  reply.prepared.parsed.records = []; // the encoded buffer carries them
  self.postMessage(reply, [reply.prepared.encoded!.bytes.buffer as ArrayBuffer]);
};
