import type { EnvName } from '../../config/index.ts';
import { HttpUrl, renderDepositList, renderDepositReport } from '../../status-page/index.ts';
import type { FileReport, Store } from '../../store/index.ts';
import { errorResponse, JSON_HEADERS, notConfigured, pageLimit } from '../wire/index.ts';
import type { ReportKeys } from './api-keys.ts';
import { formatOf, HTML_HEADERS, splitUrl } from './status-route.ts';

/**
 * GET (and HEAD) /v2.2/platforms/{name}/deposits[/{file}], under /staging/ too: a platform's deposit reports, read
 * with its report key (docs/interface.md, "Deposit reports": our addition to the interface). A key sees its own
 * platform's files only; another platform's name is a 404 as an unknown one is, so a key learns nothing of other
 * platforms. JSON by default; HTML for `?format=html` or a browser's Accept.
 */

export const DEPOSITS_PREFIX = '/v2.2/platforms/';
export const DEFAULT_DEPOSITS_PAGE = 20;
/** a file's report holds up to 1,000 rejected lines: a page of 100 is at most some 15 MB */
export const MAX_DEPOSITS_PAGE = 100;

export interface ReportsEnv {
  env: EnvName;
  store: Store | undefined;
}

export function handleDepositReports(
  request: Request,
  envPrefix: '' | '/staging',
  keys: ReportKeys,
  where: ReportsEnv,
): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on deposit reports; use GET`, {
      allow: 'GET, HEAD',
    });
  const { path, query } = splitUrl(request.url);
  const format = formatOf(query, request.headers.get('accept'), 'json');
  // the key first: without a good one every answer is the 401 (docs/interface.md), a bad format's too
  const platform = keys.check(request, format === 'html');
  if (platform instanceof Response) return platform;
  if (typeof format !== 'string') return errorResponse(format.fault.status, format.fault.error, format.fault.message);
  const parts = path.slice(envPrefix.length + DEPOSITS_PREFIX.length).split('/');
  let name: string;
  let file: string | undefined;
  try {
    name = decodeURIComponent(parts[0] ?? '');
    file = parts.length === 3 ? decodeURIComponent(parts[2]!) : undefined;
  } catch {
    return errorResponse(400, 'BAD_REQUEST', 'the address holds a malformed percent-encoding');
  }
  if (parts[1] !== 'deposits' || parts.length > 3 || file === '')
    return errorResponse(404, 'NOT_FOUND', 'no such route; deposit reports are at /v2.2/platforms/{name}/deposits');
  // another platform's reports are not there for this key, exactly as an unknown platform's are not
  if (name !== platform) return errorResponse(404, 'NOT_FOUND', `no platform ${JSON.stringify(name)} for this key`);
  if (!where.store) return notConfigured();
  const ctx = { staging: envPrefix === '/staging' };
  if (file !== undefined) {
    const report = where.store.fileReport(`${platform}/${file}`);
    if (!report) return errorResponse(404, 'NOT_FOUND', `${platform}/${file} is not in the ${where.env} ledger (yet)`);
    return reply(request, format, report, () => renderDepositReport(report, ctx));
  }
  const params = new URLSearchParams(query);
  for (const key of params.keys())
    if (key !== 'after' && key !== 'limit' && key !== 'format')
      return errorResponse(400, 'BAD_REQUEST', `unknown query parameter "${key}"; this route takes after and limit`);
  const limit = pageLimit(params.get('limit') ?? undefined, DEFAULT_DEPOSITS_PAGE, MAX_DEPOSITS_PAGE);
  if (limit instanceof Response) return limit;
  const after = params.get('after') ?? undefined;
  const page = where.store.platformFiles(platform, limit, after === undefined ? undefined : `${platform}/${after}`);
  if (!page)
    return errorResponse(
      400,
      'BAD_REQUEST',
      `after: ${JSON.stringify(after)} is not a file of ${platform} in the ${where.env} ledger; give the "next" of the page before`,
    );
  const store = where.store;
  const reports = page.entries.map((e) => store.fileReport(e.key)!);
  // `next` is the last file's name within the platform, as `after` takes it
  const next = page.next?.slice(platform.length + 1);
  const body = { platform, env: where.env, deposits: reports, ...(next !== undefined ? { next } : {}) };
  return reply(request, format, body, () => {
    // paths on this site, never built from the request's address: behind a TLS-terminating proxy that is
    // http://<inside host>, and the client's Host would set it
    const list = [...(ctx.staging ? ['staging'] : []), 'v2.2', 'platforms', platform, 'deposits'];
    if (next !== undefined) params.set('after', next);
    const nextPath = next === undefined ? undefined : HttpUrl.sitePath(list, params);
    return renderDepositList(
      platform,
      reports,
      {
        file: (key) => HttpUrl.sitePath([...list, key.slice(platform.length + 1)]),
        ...(nextPath ? { next: nextPath } : {}),
      },
      ctx,
    );
  });
}

/** Never cached by a shared cache: the reports are the platform's own. */
function reply(request: Request, format: 'json' | 'html', body: object | FileReport, page: () => string): Response {
  const headers = {
    ...(format === 'html' ? HTML_HEADERS : { ...JSON_HEADERS, vary: 'accept' }),
    'cache-control': 'private, no-cache',
  };
  const text = format === 'html' ? page() : JSON.stringify(body);
  if (request.method === 'HEAD')
    return new Response(null, { headers: { ...headers, 'content-length': String(Buffer.byteLength(text)) } });
  return new Response(text, { headers });
}
