import { errorBody, errorResponse, JSON_HEADERS } from './errors.ts';
import { firstJsonFault, positionOf } from './json-syntax.ts';
import { firstInvalidUtf8, utf8Text } from './utf8.ts';

/** How much of a request body is read, and for how long (config `server.maxBodyBytes`, `server.bodyTimeoutMs`). */
export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Reads a JSON request body as bytes, with the size bound enforced on the bytes actually read (a Content-Length
 * header is checked first but not trusted), so a chunked body cannot slip past it. A body that has not arrived
 * whole within `timeoutMs` (StallWatch) is answered 408 and its connection closed: a stalled client must not hold a
 * connection and a request slot until the server's idle time-out drops it without a word.
 */
export function readJsonBytes(request: Request, limits: BodyLimits): Promise<Uint8Array | Response> {
  const type = request.headers.get('content-type');
  if (type !== 'application/json' && (!type || !/^application\/json\s*(;|$)/i.test(type)))
    return Promise.resolve(
      errorResponse(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        `the body must be application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'})`,
      ),
    );
  // a coded body would be read as JSON text as it is: refused as a media type is, before anything is read
  const coding = request.headers.get('content-encoding');
  if (coding && !IDENTITY.test(coding))
    return Promise.resolve(
      errorResponse(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        `the body must be sent without a content coding (got Content-Encoding ${JSON.stringify(coding)}); send it uncompressed`,
      ),
    );
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limits.maxBytes)
    return Promise.resolve(
      tooLarge(limits.maxBytes, request.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined),
    );
  let read: Promise<Uint8Array | Response>;
  try {
    // With a Content-Length the server reads exactly that many bytes (checked above).
    read = Number.isFinite(declared) ? request.bytes() : readBounded(request, limits.maxBytes);
  } catch (e) {
    return Promise.resolve(unreadable(e));
  }
  // not an async function: each await layer is a measurable share of a one-DOI request
  return stalls.within(read, limits.timeoutMs, () => timedOut(limits.timeoutMs), unreadable);
}

const IDENTITY = /^[ \t]*identity[ \t]*$/i;

/** The client went away or broke the framing mid-body: its fault, not the server's (a 400, not a 500). */
function unreadable(e: unknown): Response {
  return errorResponse(
    400,
    'BAD_REQUEST',
    `the request body could not be read to its end: ${(e as Error).message ?? String(e)}`,
  );
}

/**
 * Body reads still under way, checked by one sweep every STALL_SWEEP_MS while any is: a timer set and cleared
 * per request cost a measurable share of a small request's time. A stalled read is answered between its
 * time-out and STALL_SWEEP_MS later.
 */
class StallWatch {
  private readonly reads = new Set<{ deadline: number; stall(): void }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  /** `read`'s result (`failed(error)` if it rejects), or `late()`'s once `ms` have passed without it. */
  within<T>(read: Promise<T>, ms: number, late: () => T, failed: (error: unknown) => T): Promise<T> {
    return new Promise<T>((resolve) => {
      const entry = { deadline: performance.now() + ms, stall: () => resolve(late()) };
      this.reads.add(entry);
      if (!this.sweeper) {
        this.sweeper = setInterval(() => this.sweep(), STALL_SWEEP_MS);
        this.sweeper.unref();
      }
      read.then(
        (v) => {
          this.reads.delete(entry);
          resolve(v);
        },
        (e: unknown) => {
          this.reads.delete(entry);
          resolve(failed(e));
        },
      );
    });
  }

  private sweep(): void {
    const now = performance.now();
    for (const r of this.reads)
      if (r.deadline <= now) {
        this.reads.delete(r);
        r.stall();
      }
    if (this.reads.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
const STALL_SWEEP_MS = 100;
const stalls = new StallWatch();

/** The body's JSON value, or the INVALID_JSON error saying where parsing failed. */
export function parseJson(bytes: Uint8Array): { value: unknown } | Response {
  const text = utf8Text(bytes);
  if (text === undefined) {
    const at = firstInvalidUtf8(bytes);
    return invalidJson(
      `at ${positionOf(bytes, at)}: not UTF-8 (an invalid sequence starts with byte 0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')})`,
    );
  }
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    // the engine's message names no position: the scanner finds it, on this failure path only
    const fault = firstJsonFault(bytes);
    return invalidJson(fault ? `at ${positionOf(bytes, fault.at)}: ${fault.what}` : (e as Error).message);
  }
}

function invalidJson(where: string): Response {
  return errorResponse(400, 'INVALID_JSON', `the body is not valid JSON: ${where}`);
}

async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array | Response> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) return tooLarge(maxBytes, reader);
    parts.push(value);
  }
  const all = Buffer.concat(parts);
  return new Uint8Array(all.buffer, all.byteOffset, all.length); // one typed-array kind for the scanner
}

/**
 * 413 at once, without reading the body to its end. The connection is then closed, but not while the client is
 * still sending: closing a socket with unread bytes makes the kernel reset it, and a reset can destroy the 413
 * before the client reads it. So the reply's body stays open while what still arrives is read and dropped
 * (nothing kept), for at most LINGER_MS (a "lingering close").
 */
function tooLarge(maxBytes: number, rest: ReadableStreamDefaultReader<Uint8Array> | undefined): Response {
  const text = encoder.encode(errorBody(413, 'PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes`));
  const body = new ReadableStream<Uint8Array>({
    async start(out) {
      out.enqueue(text);
      if (rest) await dropUntilEnd(rest, LINGER_MS);
      out.close();
    },
  });
  return new Response(body, { status: 413, headers: { ...JSON_HEADERS, ...CLOSE } });
}

async function dropUntilEnd(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), ms);
  });
  try {
    while (performance.now() < deadline) {
      const r = await Promise.race([reader.read(), expired]);
      if (r === 'expired' || r.done) break;
    }
  } catch {
    // the client went away: nothing left to drop
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}

function timedOut(ms: number): Response {
  return errorResponse(408, 'REQUEST_TIMEOUT', `the request body did not arrive whole within ${ms} ms`, CLOSE);
}

const LINGER_MS = 2000;
const CLOSE = { connection: 'close' };
const encoder = new TextEncoder();
