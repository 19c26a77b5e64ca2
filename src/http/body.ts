import { errorResponse } from './errors.ts';

/** How much of a request body is read, and for how long (config `server.maxBodyBytes`, `server.bodyTimeoutMs`). */
export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Reads a JSON request body as bytes, with the size bound enforced on the bytes actually read (a Content-Length
 * header is checked first but not trusted), so a chunked body cannot slip past it. A body that has not arrived
 * whole within `timeoutMs` is answered 408 and its connection closed: a stalled client must not hold a
 * connection and a request slot until the server's idle time-out drops it without a word.
 */
export async function readJsonBytes(request: Request, limits: BodyLimits): Promise<Uint8Array | Response> {
  const type = request.headers.get('content-type');
  if (type !== 'application/json' && (!type || !/^application\/json\s*(;|$)/i.test(type)))
    return errorResponse(415, 'UNSUPPORTED_MEDIA_TYPE', `the body must be application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'})`);
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limits.maxBytes) return tooLarge(limits.maxBytes);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<Response>((resolve) => {
    timer = setTimeout(() => resolve(timedOut(limits.timeoutMs)), limits.timeoutMs);
  });
  try {
    // With a Content-Length the server reads exactly that many bytes (checked above).
    const read = Number.isFinite(declared) ? request.bytes() : readBounded(request, limits.maxBytes).then((b) => b ?? tooLarge(limits.maxBytes));
    return await Promise.race([read, stalled]);
  } catch (e) {
    // the client went away or broke the framing mid-body: its fault, not the server's (a 400, not a 500)
    return errorResponse(400, 'BAD_REQUEST', `the request body could not be read to its end: ${(e as Error).message ?? String(e)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** The body's JSON value, or the INVALID_JSON error saying where parsing failed. */
export function parseJson(bytes: Uint8Array): { value: unknown } | Response {
  try {
    return { value: JSON.parse(decoder.decode(bytes)) };
  } catch (e) {
    return errorResponse(400, 'INVALID_JSON', `the body is not valid JSON: ${(e as Error).message}`);
  }
}
// not fatal: malformed UTF-8 becomes U+FFFD, as in Request.json()
const decoder = new TextDecoder();

async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  if (!request.body) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > maxBytes) return undefined; // leaving the loop cancels the stream: the rest is not read
    parts.push(chunk);
  }
  const all = Buffer.concat(parts);
  return new Uint8Array(all.buffer, all.byteOffset, all.length); // one typed-array kind for the scanner
}

// Both close the connection: the rest of the body is never read, so the connection cannot carry another request.
function tooLarge(maxBytes: number): Response {
  return errorResponse(413, 'PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes`, CLOSE);
}

function timedOut(ms: number): Response {
  return errorResponse(408, 'REQUEST_TIMEOUT', `the request body did not arrive whole within ${ms} ms`, CLOSE);
}

const CLOSE = { connection: 'close' };
