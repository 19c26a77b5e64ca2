import { readDoiInput } from '../../doi/index.ts';
import { historyOf } from '../../history/index.ts';
import {
  PAGE_CSP,
  type PageContext,
  renderBadRequestPage,
  renderHistoryPage,
  renderNotFoundPage,
  renderTooManyRequestsPage,
} from '../../status-page/index.ts';
import type { Store } from '../../store/index.ts';
import { type AddressLimits, retryAfterSeconds } from '../limits/index.ts';
import { errorBody, errorResponse, JSON_HEADERS, noneMatch } from '../wire/index.ts';
import { type PageCache, type PageFormat, pageKey, type RenderedPage } from './page-cache.ts';

/**
 * GET and HEAD /doi/{doi} (and /staging/doi/{doi}): the document status page (docs/interface.md, "Document status
 * page"). The DOI is the rest of the path, percent-decoded, matched as its key (ASCII letters folded). HTML by
 * default; JSON for `?format=json` or an Accept header that prefers application/json. No key: the page is
 * public, as integrators link readers to it.
 */

export const STATUS_PAGE_PREFIX = '/doi/';

/** An environment's store and its rendered pages. */
export interface StatusEnv {
  store: Store;
  pages: PageCache;
}

export function handleStatusPage(
  request: Request,
  envPrefix: '' | '/staging',
  env: StatusEnv | undefined,
  /** pages a second per reader (`[statusPage] rateLimit`); none: no limit */
  limits?: AddressLimits,
): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return errorResponse(
      405,
      'METHOD_NOT_ALLOWED',
      `${request.method} is not allowed on status pages; use GET or HEAD`,
      { allow: 'GET, HEAD' },
    );
  const { path, query } = splitUrl(request.url);
  const format = formatOf(query, request.headers.get('accept'));
  if (typeof format !== 'string') return errorAnswer(request, format.fault);
  const ctx: PageContext = { staging: envPrefix === '/staging' };
  const wait = limits?.admit(request) ?? 0;
  if (wait > 0) return tooManyRequests(request, format, retryAfterSeconds(wait), ctx);
  const sent = decodeDoi(path.slice(envPrefix.length + STATUS_PAGE_PREFIX.length));
  if (sent.problem !== undefined) return badRequest(request, format, sent.text, sent.problem, ctx);
  const input = readDoiInput(sent.text);
  if (input.problem !== undefined) return badRequest(request, format, sent.text, input.problem, ctx);
  if (!env)
    return errorAnswer(request, {
      status: 404,
      error: 'NOT_CONFIGURED',
      message: 'this environment is not configured',
    });
  const key = pageKey(format, input.key);
  // the check and the render below run in one turn, so they see one read snapshot
  const cacheable = env.pages.usable();
  let page = cacheable ? env.pages.get(key) : undefined;
  if (!page) {
    const history = historyOf(env.store, input.key);
    if (!history) {
      if (format === 'json')
        return errorAnswer(request, {
          status: 404,
          error: 'NOT_FOUND',
          message: `no history is known for DOI ${input.bare}`,
        });
      return send(request, rendered(renderNotFoundPage(input.bare, ctx), format, 404), 404);
    }
    page = rendered(format === 'json' ? JSON.stringify(history) : renderHistoryPage(history, ctx), format, 200);
    if (cacheable) env.pages.set(key, page);
  }
  return send(request, page, 200);
}

function badRequest(request: Request, format: PageFormat, sent: string, problem: string, ctx: PageContext): Response {
  if (format === 'json')
    return errorAnswer(request, { status: 400, error: 'BAD_REQUEST', message: `${JSON.stringify(sent)}: ${problem}` });
  return send(request, rendered(renderBadRequestPage(sent, problem, ctx), format, 400), 400);
}

/** A reader over the limit: 429 with Retry-After, as a page or as the API's JSON error. */
function tooManyRequests(request: Request, format: PageFormat, seconds: number, ctx: PageContext): Response {
  const retry = { 'retry-after': String(seconds) };
  if (format === 'json')
    return errorAnswer(
      request,
      { status: 429, error: 'RATE_LIMITED', message: `too many pages asked from your address; retry in ${seconds} s` },
      retry,
    );
  const page = rendered(renderTooManyRequestsPage(seconds, ctx), format, 429);
  page.headers.set('retry-after', retry['retry-after']);
  return send(request, page, 429);
}

interface ErrorAnswer {
  status: number;
  error: 'BAD_REQUEST' | 'NOT_FOUND' | 'NOT_CONFIGURED' | 'RATE_LIMITED';
  message: string;
}

/** A JSON error body, with the page's Vary and nosniff; HEAD gets its headers and length without it. */
function errorAnswer(request: Request, e: ErrorAnswer, extra: Record<string, string> = {}): Response {
  const headers = { vary: 'accept', 'x-content-type-options': 'nosniff', ...extra };
  if (request.method !== 'HEAD') return errorResponse(e.status, e.error, e.message, headers);
  const length = String(Buffer.byteLength(errorBody(e.status, e.error, e.message)));
  return new Response(null, { status: e.status, headers: { ...JSON_HEADERS, ...headers, 'content-length': length } });
}

/** The headers of every HTML page this server renders (status pages, deposit reports, the console), with its CSP. */
export function htmlHeaders(csp: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
}

export const HTML_HEADERS = { ...htmlHeaders(PAGE_CSP), vary: 'accept' };
const JSON_PAGE_HEADERS = { ...JSON_HEADERS, 'x-content-type-options': 'nosniff', vary: 'accept' };

/**
 * A page's bytes with its headers: a weak ETag of the body and a short public cache life (a deposit or an
 * update import can change the page at any time). Made once per render; the page cache keeps it whole.
 */
function rendered(text: string, format: PageFormat, status: number): RenderedPage {
  const body = Buffer.from(text);
  const etag = `W/"${Bun.hash(body).toString(36)}"`;
  const headers = new Headers({
    ...(format === 'html' ? HTML_HEADERS : JSON_PAGE_HEADERS),
    'cache-control': status === 200 ? 'public, max-age=60' : 'no-cache',
    etag,
  });
  return { body, etag, headers };
}

/** 304 for a matching If-None-Match; HEAD as GET without the body. */
function send(request: Request, page: RenderedPage, status: number): Response {
  if (status === 200 && noneMatch(request.headers.get('if-none-match'), page.etag))
    return new Response(null, { status: 304, headers: page.headers });
  if (request.method === 'HEAD') {
    const headers = new Headers(page.headers);
    headers.set('content-length', String(page.body.length));
    return new Response(null, { status, headers });
  }
  return new Response(page.body, { status, headers: page.headers });
}

/** The request's path as sent (still percent-encoded) and its query, without parsing the whole URL. */
export function splitUrl(url: string): { path: string; query: string } {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  const q = url.indexOf('?', start);
  return q < 0 ? { path: url.slice(start), query: '' } : { path: url.slice(start, q), query: url.slice(q + 1) };
}

/** the longest DOI part of an address read, percent-encoded; a longer one is a 400 page, not decoded */
const MAX_PATH_BYTES = 8192;

function decodeDoi(encoded: string): { text: string; problem?: string } {
  if (encoded.length > MAX_PATH_BYTES)
    return { text: `${encoded.slice(0, 64)}…`, problem: `the address is longer than ${MAX_PATH_BYTES} bytes` };
  if (encoded === '') return { text: '', problem: 'the address names no DOI after /doi/' };
  try {
    return { text: decodeURIComponent(encoded) };
  } catch {
    return {
      text: encoded,
      problem: 'the address holds a malformed percent-encoding (% must be followed by two hex digits of UTF-8)',
    };
  }
}

/**
 * `?format=json|html` decides; otherwise JSON only when the Accept header ranks application/json above
 * text/html (a browser's Accept gets HTML, `Accept: application/json` gets JSON).
 */
export function formatOf(
  query: string,
  accept: string | null,
  fallback: PageFormat = 'html',
): PageFormat | { fault: ErrorAnswer } {
  const asked = new URLSearchParams(query).get('format');
  if (asked !== null) {
    if (asked === 'json' || asked === 'html') return asked;
    return {
      fault: {
        status: 400,
        error: 'BAD_REQUEST',
        message: `format must be json or html, not ${JSON.stringify(asked.slice(0, 40))}`,
      },
    };
  }
  if (!accept) return fallback;
  const json = quality(accept, 'application', 'json');
  const page = quality(accept, 'text', 'html');
  return json > page ? 'json' : page > json ? 'html' : fallback;
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
