import { TypeCompiler } from '@sinclair/typebox/compiler';
import { decodeCursor, encodeCursor, type FeedCursor, type Store } from '../../store/index.ts';
import {
  acceptsGzip,
  type BodyLimits,
  codedEtag,
  describeSchemaFault,
  errorResponse,
  JSON_HEADERS,
  noneMatch,
  notConfigured,
  pageLimit,
  parseJson,
  readJsonBytes,
} from '../wire/index.ts';
import type { ApiKeys } from './api-keys.ts';
import { ByPrefixRequest, MAX_CHANGES_PER_PAGE } from './updates-schema.ts';

/**
 * The change feed and the private lookup (docs/design.md, "Change feed", "Private lookup"):
 *  - GET  .../v2.2/updates/changes?after=<cursor>&limit=<n>
 *  - GET  .../v2.2/updates/prefixes (ETag, If-None-Match, gzip)
 *  - POST .../v2.2/updates/by-prefix {"prefixes": [...]}
 */

const FEED_HEADERS = { ...JSON_HEADERS, 'cache-control': 'no-store' };
// a Headers instance is copied into each Response faster than a plain object is converted
const FEED_REPLY_HEADERS = new Headers(FEED_HEADERS);
const checkByPrefix = TypeCompiler.Compile(ByPrefixRequest);

function keyProblem(request: Request, keys: ApiKeys): Response | undefined {
  const integrator = keys.check(request);
  return integrator instanceof Response ? integrator : undefined;
}

export function handleChanges(request: Request, keys: ApiKeys, store: Store | undefined): Response {
  const denied = keyProblem(request, keys);
  if (denied) return denied;
  const query = queryOf(request.url);
  if (typeof query === 'string') return errorResponse(400, 'BAD_REQUEST', query);
  const limit = pageLimit(query.limit, MAX_CHANGES_PER_PAGE, MAX_CHANGES_PER_PAGE);
  if (limit instanceof Response) return limit;
  const afterText = query.after;
  // an empty poll (the client has every change) is answered without reading the feed
  if (afterText !== undefined && store?.changeFeed.isTip(afterText))
    return new Response(`{"changes":[],"next":"${afterText}","more":false}`, { headers: FEED_REPLY_HEADERS });
  let after: FeedCursor | undefined;
  if (afterText !== undefined) {
    after = decodeCursor(afterText);
    if (!after)
      return errorResponse(
        400,
        'BAD_REQUEST',
        'after: not a cursor this service gave out (pass the "next" of an earlier reply, or leave it out to start from the beginning)',
      );
  }
  if (!store) return notConfigured();
  const page = store.changeFeed.changesAfter(after, limit);
  if ('refused' in page)
    return page.refused === 'unknown'
      ? errorResponse(400, 'BAD_REQUEST', `after: ${page.message}`)
      : errorResponse(410, 'CURSOR_EXPIRED', page.message);
  const body = `{"changes":[${page.items.join(',')}],"next":"${encodeCursor(page.next)}","more":${page.more}}`;
  return new Response(body, { headers: FEED_REPLY_HEADERS });
}

/** The feed's query: `after` and `limit`, each at most once. */
interface FeedQuery {
  after?: string;
  limit?: string;
}

/**
 * The query's parameters (each at most once, known ones only), or what is wrong with them. Not `new URL` nor a
 * split: an empty poll is mostly this, so the parts are walked in place.
 */
function queryOf(url: string): FeedQuery | string {
  const params: FeedQuery = {};
  let from = url.indexOf('?') + 1;
  if (from === 0) return params;
  while (from <= url.length) {
    let to = url.indexOf('&', from);
    if (to < 0) to = url.length;
    if (to > from) {
      const part = url.slice(from, to);
      const eq = part.indexOf('=');
      let name: string;
      let value: string;
      try {
        name = decoded(eq < 0 ? part : part.slice(0, eq));
        value = eq < 0 ? '' : decoded(part.slice(eq + 1));
      } catch {
        return `the query has a malformed percent-encoding: ${JSON.stringify(part)}`;
      }
      if (name !== 'after' && name !== 'limit')
        return `unknown query parameter "${name}"; this route takes "after" and "limit"`;
      if (params[name] !== undefined) return `the query parameter "${name}" is given twice`;
      params[name] = value;
    }
    from = to + 1;
  }
  return params;
}

/** A query component decoded (`+` is a space); one without `%` or `+` (every cursor, every limit) is itself. */
function decoded(text: string): string {
  return text.includes('%') || text.includes('+') ? decodeURIComponent(text.replaceAll('+', ' ')) : text;
}

export function handlePrefixes(request: Request, keys: ApiKeys, store: Store | undefined): Response {
  const denied = keyProblem(request, keys);
  if (denied) return denied;
  if (!store) return notConfigured();
  const list = store.changeFeed.prefixIndex().list;
  const gzip = acceptsGzip(request.headers.get('accept-encoding'));
  const etag = gzip ? codedEtag(list.etag, 'gzip') : list.etag;
  const headers: Record<string, string> = { etag, 'cache-control': 'no-cache', vary: 'accept-encoding' };
  if (noneMatch(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers });
  return new Response(gzip ? list.gzip : list.json, {
    headers: { ...JSON_HEADERS, ...headers, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
  });
}

export async function handleByPrefix(
  request: Request,
  keys: ApiKeys,
  store: Store | undefined,
  limits: BodyLimits,
): Promise<Response> {
  const denied = keyProblem(request, keys);
  if (denied) return denied;
  const body = await readJsonBytes(request, limits);
  if (body instanceof Response) return body;
  const parsed = parseJson(body);
  if (parsed instanceof Response) return parsed;
  if (!checkByPrefix.Check(parsed.value))
    return errorResponse(
      400,
      'BAD_REQUEST',
      describeSchemaFault(checkByPrefix, parsed.value, '{"prefixes": ["3fa0", ...]}', 'an entry is a hex prefix'),
    );
  if (!store) return notConfigured();
  const index = store.changeFeed.prefixIndex();
  // a prefix one digit shorter than the list's is taken (a list fetched before the length grew); shorter ones
  // would return a large share of all works
  const shortest = Math.max(1, index.prefixLength - 1);
  const prefixes = (parsed.value as ByPrefixRequest).prefixes.map((p) => p.toLowerCase());
  const short = prefixes.findIndex((p) => p.length < shortest);
  if (short >= 0)
    return errorResponse(
      400,
      'BAD_REQUEST',
      `prefixes[${short}]: "${prefixes[short]}" is shorter than ${shortest} hex digits; the prefix list now uses ${index.prefixLength} (GET /v2.2/updates/prefixes)`,
    );
  const works = index.lookup(prefixes);
  return new Response(`{"prefixLength":${index.prefixLength},"works":[${works.join(',')}]}`, { headers: FEED_HEADERS });
}
