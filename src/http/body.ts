import { errorResponse } from './errors.ts';

/**
 * Reads a JSON request body with the size bound enforced on the bytes actually read (a Content-Length header
 * is checked first but not trusted), so a chunked body cannot slip past it.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<{ value: unknown } | Response> {
  const type = request.headers.get('content-type');
  if (type !== 'application/json' && (!type || !/^application\/json\s*(;|$)/i.test(type)))
    return errorResponse(415, 'UNSUPPORTED_MEDIA_TYPE', `the body must be application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'})`);
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) return tooLarge(maxBytes);
  try {
    // With a Content-Length the server reads exactly that many bytes (checked above): parse them natively.
    if (Number.isFinite(declared)) return { value: await request.json() };
    const text = await readBounded(request, maxBytes);
    if (text === undefined) return tooLarge(maxBytes);
    return { value: JSON.parse(text) };
  } catch (e) {
    return errorResponse(400, 'INVALID_JSON', `the body is not valid JSON: ${(e as Error).message}`);
  }
}

async function readBounded(request: Request, maxBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > maxBytes) return undefined;
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

function tooLarge(maxBytes: number): Response {
  return errorResponse(413, 'PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes`);
}
