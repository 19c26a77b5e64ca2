import { createWriteStream } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** A download that brought no byte for this long is given up; the round fails and is tried again. */
const DOWNLOAD_STALL_MS = 60_000;
/**
 * A download slower on average than this (32 kbit/s: 8 run at once), after a first stall time's grace, is given
 * up as well: a body that trickles a byte now and then never stalls, and would hold the mirror (every file after
 * it) for ever.
 */
const DOWNLOAD_MIN_BYTES_PER_S = 4 * 1024;
/** the longest a timer can wait (a longer one fires at once) */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One listed object: what is fetched, and what the bytes must come to. */
interface ListedObject {
  bucket: string;
  key: string;
  etag: string;
  size: number;
  /** ms; the value the apply order used */
  lastModified: number;
}

/**
 * Fetches one object into `path`: GetObject with If-Match on the listed ETag (the listed bytes, not a newer
 * upload), streamed to the file. It always ends: a body that breaks off, brings no byte for `stallMs`, comes slower
 * than `minBytesPerS` on average (over `stallMs` plus the time its size takes at that rate) or brings another byte
 * count than listed is an error, never a wait. (s3-sync-client's download pipes the body without passing its
 * errors on: a connection reset mid-body left its promise pending for ever, and the mirror with it.) The file's
 * mtime is the listed LastModified, to the millisecond, as the apply order saw it.
 */
export async function downloadObject(
  client: S3Client,
  o: ListedObject,
  path: string,
  opts: { stallMs?: number; minBytesPerS?: number; stop?: AbortSignal } = {},
): Promise<void> {
  const { stallMs = DOWNLOAD_STALL_MS, minBytesPerS = DOWNLOAD_MIN_BYTES_PER_S, stop } = opts;
  const abort = new AbortController();
  const stopped = () => abort.abort(stop!.reason);
  if (stop?.aborted) stopped();
  stop?.addEventListener('abort', stopped, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(new Error(`${o.key}: no byte arrived for ${stallMs / 1000} s`)), stallMs);
  };
  let bytes = 0;
  arm();
  const budgetMs = Math.min(MAX_TIMER_MS, stallMs + (o.size / minBytesPerS) * 1000);
  const slow = setTimeout(
    () =>
      abort.abort(
        new Error(
          `${o.key}: ${bytes} of ${o.size} bytes arrived in ${(budgetMs / 1000).toFixed(1)} s, slower than ${minBytesPerS} bytes/s`,
        ),
      ),
    budgetMs,
  );
  try {
    const res = await client.send(
      new GetObjectCommand({ Bucket: o.bucket, Key: o.key, ...(o.etag ? { IfMatch: o.etag } : {}) }),
      { abortSignal: abort.signal },
    );
    if (!res.Body) throw new Error(`${o.key}: the answer has no body`);
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        arm();
        // an object replaced since it was listed (no ETag to match) is never written past its listed size
        if (bytes > o.size) {
          abort.abort(sizeMismatch(o, bytes));
          done();
        } else done(null, chunk);
      },
    });
    await pipeline(res.Body as Readable, counted, createWriteStream(path), { signal: abort.signal });
  } catch (e) {
    if (abort.signal.aborted) throw abort.signal.reason as Error;
    // an S3 answer (403, 412, 5xx) or a local write error (a syscall's) as it is; a connection that broke off
    // mid-body ("aborted") named by its key
    if ((e as { $metadata?: unknown }).$metadata !== undefined || (e as NodeJS.ErrnoException).syscall !== undefined)
      throw e;
    throw new Error(`${o.key}: the download broke off: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
    clearTimeout(slow);
    stop?.removeEventListener('abort', stopped);
  }
  if (bytes !== o.size) throw sizeMismatch(o, bytes);
  const at = new Date(o.lastModified);
  await utimes(path, at, at);
}

function sizeMismatch(o: { key: string; size: number }, bytes: number): Error {
  return new Error(`${o.key}: ${bytes} bytes arrived, the listing says ${o.size}`);
}
