import { TypeCompiler } from '@sinclair/typebox/compiler';
import { doiKey, doiProblem, normaliseDoiInput, quickDoiKey } from '../deposit/index.ts';
import type { UpdatesIndex } from '../store/index.ts';
import type { ApiKeys } from './auth.ts';
import { readJsonBody } from './body.ts';
import { errorResponse, JSON_HEADERS } from './errors.ts';
import { ReplyBytes } from './reply-bytes.ts';
import { UpdatesRequest } from './schemas.ts';

const checkRequest = TypeCompiler.Compile(UpdatesRequest);
const reply = new ReplyBytes();
// a Headers instance is copied into each Response faster than a plain object is converted
const REPLY_HEADERS = new Headers(JSON_HEADERS);

/**
 * POST /v2.1/updates and /v2.2/updates (interface 4.2, DESIGN 6). Order of checks: key (401), media type (415),
 * size (413), JSON and schema (400). The reply is built as text from the index's pre-rendered update lists:
 * most DOIs have none, and a miss is one Map lookup.
 */
export async function handleUpdates(request: Request, keys: ApiKeys, index: UpdatesIndex | undefined, maxBodyBytes: number): Promise<Response> {
  if (!keys.find(request.headers.get('x-api-key')))
    return errorResponse(401, 'UNAUTHORIZED', request.headers.has('x-api-key') ? 'the x-api-key is not known' : 'the x-api-key header is missing');
  const body = await readJsonBody(request, maxBodyBytes);
  if (body instanceof Response) return body;
  if (!checkRequest.Check(body.value)) return errorResponse(400, 'BAD_REQUEST', describe(body.value));
  if (!index) return errorResponse(404, 'NOT_CONFIGURED', 'this environment is not configured');
  const dois = (body.value as UpdatesRequest).dois;
  const table = index.tableBytes();
  const out = reply.start().ascii('{"documents":[');
  for (let i = 0; i < dois.length; i++) {
    const sent = dois[i]!;
    if (i > 0) out.ascii(',');
    let key = quickDoiKey(sent);
    if (key === undefined) {
      const bare = normaliseDoiInput(sent);
      const problem = doiProblem(bare);
      if (problem) {
        out.ascii('{"doi":').text(JSON.stringify(sent)).ascii(',"statusCode":400,"updates":[],"message":').text(JSON.stringify(problem)).ascii('}');
        continue;
      }
      key = doiKey(bare);
      out.ascii('{"doi":').text(JSON.stringify(sent));
    } else out.ascii('{"doi":"').ascii(sent).ascii('"'); // quickDoiKey: printable ASCII, nothing to escape
    const updates = table.get(key);
    if (updates) out.ascii(',"statusCode":200,"updates":').bytes(updates).ascii('}');
    else out.ascii(',"statusCode":200,"updates":[]}');
  }
  return new Response(out.ascii(']}').take(), { headers: REPLY_HEADERS });
}

/** The first schema fault, with its path, in words an integrator can act on. */
function describe(value: unknown): string {
  const e = checkRequest.Errors(value).First();
  if (!e) return 'the body does not match the request schema';
  const at = e.path || '/';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the body must be a JSON object {"dois": [...]}';
  if (e.message === 'Expected required property') return `${at}: required: the body must be {"dois": ["10.xxxx/...", ...]}`;
  if (e.message.startsWith('Unexpected property')) return `${at}: unexpected property; the body has only "dois"`;
  if (at === '/dois' && Array.isArray((value as { dois?: unknown }).dois))
    return `/dois: ${(value as { dois: unknown[] }).dois.length} DOIs given; send 1 to 100 per request`;
  return `${at}: ${e.message}`;
}
