import { TypeCompiler } from '@sinclair/typebox/compiler';
import { JsonBytes } from '../../bytes/index.ts';
import { copyPlainDoi, MAX_DOIS_PER_REQUEST, NOT_PLAIN, readDoiInput } from '../../doi/index.ts';
import type { UpdatesIndex, UpdatesTable } from '../../store/index.ts';
import {
  describeSchemaFault,
  errorResponse,
  JSON_HEADERS,
  notConfigured,
  parseJson,
  scanPlainBody,
} from '../wire/index.ts';
import { UpdatesRequest } from './updates-schema.ts';

const checkRequest = TypeCompiler.Compile(UpdatesRequest);
const SHAPE = '{"dois": ["10.xxxx/...", ...]}';
const ENTRY = 'an entry is a DOI string';
/** a reply's buffer to begin with: a 100-DOI answer fits; it grows for a larger one */
const REPLY_BYTES = 256 * 1024;
const reply = new JsonBytes(REPLY_BYTES);
const spans = new Int32Array(2 * MAX_DOIS_PER_REQUEST);
const ascii = new TextDecoder(); // for spans of ASCII bytes (scanPlainBody admits no others)
const encoder = new TextEncoder();
// one document: DOI_OPEN, the DOI, `"`, then FOUND + the update list + `}`, or NONE
const DOI_OPEN = encoder.encode('{"doi":"');
const FOUND = encoder.encode(',"statusCode":200,"updates":');
const NONE = encoder.encode(',"statusCode":200,"updates":[]}');
// a Headers instance is copied into each Response faster than a plain object is converted
const REPLY_HEADERS = new Headers(JSON_HEADERS);

/**
 * POST /v2.1/updates and /v2.2/updates (docs/interface.md, "Updates API"), after the key and the body are read
 * (keyedPost: 401, 415, 413): JSON and schema (400). The reply is written as bytes from the index's pre-rendered update lists:
 * most DOIs have none, and a miss is one hash-table probe.
 *
 * A body in the plain shape (scanPlainBody) is answered from its bytes: no JSON.parse, no string per DOI. Any
 * other body is parsed and checked in full; both paths give byte-identical replies (test/http/wire/plain-body.test.ts).
 */
export function handleUpdates(body: Uint8Array, index: UpdatesIndex | undefined): Response {
  const count = scanPlainBody(body, spans, MAX_DOIS_PER_REQUEST);
  if (count >= 0) {
    if (!index) return notConfigured();
    return replyOf(answerPlain(body, spans, count, index.table()));
  }
  const parsed = parseJson(body);
  if (parsed instanceof Response) return parsed;
  if (!checkRequest.Check(parsed.value))
    return errorResponse(400, 'BAD_REQUEST', describeSchemaFault(checkRequest, parsed.value, SHAPE, ENTRY));
  if (!index) return notConfigured();
  return replyOf(answerParsed((parsed.value as UpdatesRequest).dois, index.table()));
}

/**
 * The reply for the `count` DOIs whose byte ranges scanPlainBody left in `spans`, written straight from the
 * body's bytes where they are plain DOIs. The result is the shared reply buffer: read it before the next call.
 */
export function answerPlain(body: Uint8Array, spans: Int32Array, count: number, table: UpdatesTable): JsonBytes {
  const out = reply.start().ascii('{"documents":[');
  for (let i = 0; i < count; i++) {
    if (i > 0) out.ascii(',');
    const start = spans[2 * i]!;
    const end = spans[2 * i + 1]!;
    if (!writePlainDocument(out, body, start, end, table))
      writeDocument(out, ascii.decode(body.subarray(start, end)), table);
  }
  return out.ascii(']}');
}

/**
 * The document for b[start, end) when it is a plain DOI (src/doi/plain.ts), its bytes copied into the reply and
 * hashed for the table in the same pass: this copy is most of an answer's cost. Returns false, with nothing
 * written, for anything else.
 */
function writePlainDocument(out: JsonBytes, b: Uint8Array, start: number, end: number, table: UpdatesTable): boolean {
  const buf = out.reserve(DOI_OPEN.length + (end - start) + 1);
  let p = out.pos;
  for (let k = 0; k < DOI_OPEN.length; k++) buf[p++] = DOI_OPEN[k]!;
  const h = copyPlainDoi(b, start, end, buf, p);
  if (h === NOT_PLAIN) return false;
  p += end - start;
  buf[p++] = 0x22; // the closing quote
  out.moveTo(p);
  writeFound(out, table.getHashed(h, b, start, end));
  return true;
}

/** The reply for DOIs from a parsed body (the shared reply buffer, as answerPlain). */
export function answerParsed(dois: readonly string[], table: UpdatesTable): JsonBytes {
  const out = reply.start().ascii('{"documents":[');
  for (let i = 0; i < dois.length; i++) {
    if (i > 0) out.ascii(',');
    writeDocument(out, dois[i]!, table);
  }
  return out.ascii(']}');
}

/** One document for a DOI as sent: any form the API accepts, or a per-document 400 saying why it is not a DOI. */
function writeDocument(out: JsonBytes, sent: string, table: UpdatesTable): void {
  const input = readDoiInput(sent);
  if (input.problem !== undefined)
    out
      .ascii('{"doi":')
      .text(JSON.stringify(sent))
      .ascii(',"statusCode":400,"updates":[],"message":')
      .text(JSON.stringify(input.problem))
      .ascii('}');
  else if (input.plain)
    writeFound(out.bytes(DOI_OPEN).ascii(sent).ascii('"'), table.get(input.key)); // printable ASCII, nothing to escape
  else writeFound(out.ascii('{"doi":').text(JSON.stringify(sent)), table.get(input.key));
}

/** The rest of a document after its `doi`: status 200 and the update list, `[]` when there is none. */
function writeFound(out: JsonBytes, updates: Uint8Array | undefined): void {
  if (updates) out.bytes(FOUND).bytes(updates).ascii('}');
  else out.bytes(NONE);
}

function replyOf(out: JsonBytes): Response {
  return new Response(out.view(), { headers: REPLY_HEADERS });
}
