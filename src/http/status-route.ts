import { readDoiInput } from '../doi/index.ts';
import { historyOf } from '../history/index.ts';
import { PAGE_CSP, renderBadRequestPage, renderHistoryPage, renderNotFoundPage, type PageContext } from '../status-page/index.ts';
import type { Store } from '../store/index.ts';
import { errorResponse } from './errors.ts';

/**
 * GET and HEAD /doi/{doi} (and /staging/doi/{doi}): the document status page (docs/interface.md, "Document status
 * page"). The DOI is the rest of the path, percent-decoded, matched as its key (ASCII letters folded). HTML by
 * default; JSON for `?format=json` or an Accept header that prefers application/json. No key: the page is
 * public, as integrators link readers to it.
 */

export const STATUS_PAGE_PREFIX = '/doi/';
const MAX_PATH_BYTES = 8192;

type Format = 'html' | 'json';

export function handleStatusPage(request: Request, envPrefix: '' | '/staging', store: Store | undefined): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on status pages; use GET or HEAD`, { allow: 'GET, HEAD' });
  const { path, query } = splitUrl(request.url);
  const format = formatOf(query, request.headers.get('accept'));
  if (typeof format !== 'string') return answer(request, format.fault, 'json', 400);
  const ctx: PageContext = { staging: envPrefix === '/staging' };
  const sent = decodeDoi(path.slice(envPrefix.length + STATUS_PAGE_PREFIX.length));
  if (sent.problem !== undefined) return badRequest(request, format, sent.text, sent.problem, ctx);
  const input = readDoiInput(sent.text);
  if (input.problem !== undefined) return badRequest(request, format, sent.text, input.problem, ctx);
  if (!store) return answer(request, { status: 404, error: 'NOT_CONFIGURED', message: 'this environment is not configured' }, format, 404);
  const history = historyOf(store, input.key);
  if (!history) {
    if (format === 'json') return answer(request, { status: 404, error: 'NOT_FOUND', message: `no history is known for DOI ${input.bare}` }, format, 404);
    return answer(request, renderNotFoundPage(input.bare, ctx), format, 404);
  }
  return answer(request, format === 'json' ? JSON.stringify(history) : renderHistoryPage(history, ctx), format, 200);
}

function badRequest(request: Request, format: Format, sent: string, problem: string, ctx: PageContext): Response {
  if (format === 'json') return answer(request, { status: 400, error: 'BAD_REQUEST', message: `${JSON.stringify(sent)} is not a DOI: ${problem}` }, format, 400);
  return answer(request, renderBadRequestPage(sent, problem, ctx), format, 400);
}

interface ErrorAnswer {
  status: number;
  error: 'BAD_REQUEST' | 'NOT_FOUND' | 'NOT_CONFIGURED';
  message: string;
}

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' };

/**
 * The response: a weak ETag of the body and a short public cache life (the page changes when a deposit or an
 * update import touches the DOI), 304 for a matching If-None-Match, and HEAD as GET without the body.
 */
function answer(request: Request, content: string | ErrorAnswer, format: Format, status: number): Response {
  if (typeof content !== 'string') {
    const r = errorResponse(content.status, content.error, content.message, format === 'html' ? { vary: 'accept' } : {});
    return request.method === 'HEAD' ? new Response(null, { status: r.status, headers: r.headers }) : r;
  }
  const bytes = Buffer.from(content);
  const etag = `W/"${Bun.hash(bytes).toString(36)}"`;
  const headers: Record<string, string> = {
    ...(format === 'html' ? HTML_HEADERS : JSON_HEADERS),
    vary: 'accept',
    'cache-control': status === 200 ? 'public, max-age=60' : 'no-cache',
    etag,
  };
  if (status === 200 && request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
  if (request.method === 'HEAD') return new Response(null, { status, headers: { ...headers, 'content-length': String(bytes.length) } });
  return new Response(bytes, { status, headers });
}

/** The request's path as sent (still percent-encoded) and its query, without parsing the whole URL. */
function splitUrl(url: string): { path: string; query: string } {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  const q = url.indexOf('?', start);
  return q < 0 ? { path: url.slice(start), query: '' } : { path: url.slice(start, q), query: url.slice(q + 1) };
}

function decodeDoi(encoded: string): { text: string; problem?: string } {
  if (encoded.length > MAX_PATH_BYTES) return { text: `${encoded.slice(0, 64)}…`, problem: `the address is longer than ${MAX_PATH_BYTES} bytes` };
  if (encoded === '') return { text: '', problem: 'the address names no DOI after /doi/' };
  try {
    return { text: decodeURIComponent(encoded) };
  } catch {
    return { text: encoded, problem: 'the address holds a malformed percent-encoding (% must be followed by two hex digits of UTF-8)' };
  }
}

/**
 * `?format=json|html` decides; otherwise JSON only when the Accept header ranks application/json above
 * text/html (a browser's Accept gets HTML, `Accept: application/json` gets JSON).
 */
export function formatOf(query: string, accept: string | null): Format | { fault: ErrorAnswer } {
  const asked = new URLSearchParams(query).get('format');
  if (asked !== null) {
    if (asked === 'json' || asked === 'html') return asked;
    return { fault: { status: 400, error: 'BAD_REQUEST', message: `format must be json or html, not ${JSON.stringify(asked.slice(0, 40))}` } };
  }
  if (!accept) return 'html';
  const json = quality(accept, 'application', 'json');
  const page = quality(accept, 'text', 'html');
  return json > page ? 'json' : 'html';
}

/** The q-value Accept gives type/subtype: the most specific matching range wins (RFC 9110, 12.5.1); 0 if none. */
function quality(accept: string, type: string, subtype: string): number {
  let best = -1;
  let q = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const [t, s] = range.split('/');
    const specificity = t === type && s === subtype ? 2 : t === type && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
    if (specificity <= best) continue;
    best = specificity;
    const qp = params.find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
  }
  return q;
}
