/**
 * The ingest worker: reads, hashes, gunzips, parses, validates and encodes deposit files on the second core,
 * while the main thread applies the previous batch to LMDB. Results come back as a PreparedFile whose records
 * are one transferred buffer (the parsed record objects are not sent: cloning them would cost what was saved).
 */

import { prepareBucketFile } from './prepare.ts';
import type { PrepareRequest } from './prepare-messages.ts';
import { readFault } from './read-bucket-file.ts';

declare const self: Worker;

// one file at a time, in the order asked: files read side by side would all be in memory at once (a backlog hands
// the worker a pass of them), and their parse would be no faster
let queue: Promise<void> = Promise.resolve();

self.onmessage = (event: MessageEvent<PrepareRequest>) => {
  // a reply that could not be sent must not stop the queue: the request is answered as a failed read
  queue = queue
    .then(() => prepareAndReply(event.data))
    .catch((e: unknown) =>
      self.postMessage({ id: event.data.id, kind: 'readError', fault: readFault(event.data.key, e) }),
    );
};

async function prepareAndReply(request: PrepareRequest): Promise<void> {
  const reply = await prepareBucketFile(request);
  if (reply.kind !== 'prepared') return self.postMessage(reply);
  reply.prepared.parsed.records = []; // the encoded buffer carries them
  self.postMessage(reply, [reply.prepared.encoded!.bytes.buffer as ArrayBuffer]);
}
