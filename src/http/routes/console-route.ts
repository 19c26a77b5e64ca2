import { timingSafeEqual } from 'node:crypto';
import { ENV_NAMES, type EnvName } from '../../config/index.ts';
import {
  CONSOLE_CSP,
  type OperatorConsole,
  renderConsoleNotFound,
  renderFileView,
  renderOverview,
} from '../../console/index.ts';
import { errorResponse } from '../wire/index.ts';
import { basicPassword, bearerToken, keyDigest } from './api-keys.ts';
import { htmlHeaders, splitUrl } from './status-route.ts';

/**
 * GET and HEAD /console, /console/{env} and /console/{env}/files/{key} (docs/operations.md, "Operator console"):
 * the operator console's pages. Served on the operator's own listener (`server.adminListen`), or on the public
 * one only with the console's key (`server.adminKeyEnv`); a key, when configured, is asked wherever it is served.
 */

export const CONSOLE_PREFIX = '/console';

const HTML_HEADERS = {
  ...htmlHeaders(CONSOLE_CSP),
  // the figures move at every file: a view is never kept, by the browser or a proxy
  'cache-control': 'no-store',
};

/**
 * The console's key, compared in constant time through its SHA-256 digest (keyDigest: equal lengths whatever was
 * sent). A browser sends it as Basic authentication's password (any user name), which it asks for after the 401; a
 * script as `Authorization: Bearer <key>`.
 */
export class ConsoleKey {
  private readonly digest: Buffer;

  constructor(key: string) {
    this.digest = Buffer.from(keyDigest(key));
  }

  allows(request: Request): boolean {
    const header = request.headers.get('authorization');
    const sent = bearerToken(header) ?? basicPassword(header);
    return sent !== undefined && timingSafeEqual(Buffer.from(keyDigest(sent)), this.digest);
  }
}

export function handleConsole(request: Request, view: OperatorConsole, key: ConsoleKey | undefined): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return errorResponse(
      405,
      'METHOD_NOT_ALLOWED',
      `${request.method} is not allowed on the console; use GET or HEAD`,
      {
        allow: 'GET, HEAD',
      },
    );
  if (key && !key.allows(request))
    return errorResponse(401, 'UNAUTHORIZED', 'the console asks for its key (server.adminKeyEnv)', {
      'www-authenticate': 'Basic realm="doi-holdings console", charset="UTF-8"',
    });
  const page = render(splitUrl(request.url).path, view);
  // HEAD too gets the body: Bun's server sends its length and drops it (through Elysia, a null body was length 0)
  return new Response(page.html, { status: page.status, headers: HTML_HEADERS });
}

function render(path: string, view: OperatorConsole): { status: number; html: string } {
  const segments = path
    .slice(CONSOLE_PREFIX.length)
    .split('/')
    .filter((s, i) => i > 0 || s !== '');
  const notFound = (what: string) => ({
    status: 404,
    html: renderConsoleNotFound(what, view.envNames, view.version),
  });
  let words: string[];
  try {
    words = segments.map(decodeURIComponent);
  } catch {
    return notFound('The address is not percent-encoded correctly.');
  }
  if (words.length === 0 || (words.length === 1 && words[0] === '')) words = ['production'];
  const [envWord, kind, ...rest] = words;
  const env = ENV_NAMES.find((e) => e === envWord) as EnvName | undefined;
  if (!env) return notFound(`No console page is at ${path}.`);
  if (kind === undefined || (kind === '' && rest.length === 0)) {
    const overview = view.overview(env);
    return overview
      ? { status: 200, html: renderOverview(overview) }
      : notFound(`The ${env} environment is not configured.`);
  }
  if (kind !== 'files' || rest.length === 0) return notFound(`No console page is at ${path}.`);
  const fileKey = rest.join('/');
  const report = view.fileView(env, fileKey);
  return report
    ? { status: 200, html: renderFileView(report) }
    : notFound(`The ${env} ledger holds no file ${fileKey}.`);
}
