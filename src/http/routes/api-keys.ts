import type { IntegratorSettings, PlatformSettings } from '../../config/index.ts';
import { type BodyLimits, errorResponse, readJsonBytes } from '../wire/index.ts';

/**
 * `x-api-key` lookup. Keys are compared through their SHA-256 digests, so the time a lookup takes says nothing
 * about how much of a guessed key was right.
 */
export class ApiKeys {
  private byDigest = new Map<string, IntegratorSettings>();
  /** keys already matched through their digest: an integrator's next request skips the hashing */
  private known = new Map<string, IntegratorSettings>();

  constructor(integrators: readonly IntegratorSettings[]) {
    this.replace(integrators);
  }

  /** The keys of a reloaded config: from the next lookup on, a removed key is refused and a new one accepted. */
  replace(integrators: readonly IntegratorSettings[]): void {
    const byDigest = new Map<string, IntegratorSettings>();
    for (const i of integrators) {
      byDigest.set(keyDigest(i.apiKey), i);
      if (i.previousApiKey !== undefined) byDigest.set(keyDigest(i.previousApiKey), i);
    }
    this.byDigest = byDigest;
    this.known = new Map();
  }

  /**
   * The integrator whose key the request carries, or the 401 to answer: every keyed route's first check, and the
   * only one.
   */
  check(request: Request): IntegratorSettings | Response {
    return this.find(request.headers.get('x-api-key')) ?? unauthorized(request);
  }

  find(key: string | null): IntegratorSettings | undefined {
    if (!key) return undefined;
    const seen = this.known.get(key);
    if (seen) return seen;
    const found = this.byDigest.get(keyDigest(key));
    if (found) this.known.set(key, found);
    return found;
  }
}

/**
 * The platforms' report keys (`[[platforms]] reportKeyEnv`), looked up as ApiKeys looks up integrators' keys:
 * through their SHA-256 digests, so the time taken says nothing of how much of a guessed key was right.
 */
export class ReportKeys {
  private platformOf = new Map<string, string>();

  constructor(platforms: readonly PlatformSettings[]) {
    this.replace(platforms);
  }

  /** A reloaded config's keys, from the next request on. */
  replace(platforms: readonly PlatformSettings[]): void {
    const platformOf = new Map<string, string>();
    for (const p of platforms) if (p.reportKey !== undefined) platformOf.set(keyDigest(p.reportKey), p.name);
    this.platformOf = platformOf;
  }

  /**
   * The platform whose key the request carries (as `x-api-key`, or a browser's Basic password), or the 401 to
   * answer. A browser asking for HTML is told to ask its user for the key.
   */
  check(request: Request, wantsHtml: boolean): string | Response {
    const key = request.headers.get('x-api-key') ?? basicPassword(request.headers.get('authorization'));
    const platform = key ? this.platformOf.get(keyDigest(key)) : undefined;
    if (platform !== undefined) return platform;
    return errorResponse(
      401,
      'UNAUTHORIZED',
      key ? 'the key is not known' : 'the x-api-key header is missing',
      wantsHtml ? { 'www-authenticate': 'Basic realm="deposit reports", charset="UTF-8"' } : {},
    );
  }
}

/**
 * The password of an `Authorization: Basic` header (the user name is not asked for: the key names its platform, or
 * is the console's one key); undefined when there is none, or it is empty. The one Basic parser, for the console's
 * key and the platforms' report keys alike.
 */
export function basicPassword(header: string | null): string | undefined {
  const value = credentials(header, 'basic');
  if (value === undefined) return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1) || undefined;
}

/** The token of an `Authorization: Bearer` header; undefined when there is none, or it is empty. */
export function bearerToken(header: string | null): string | undefined {
  return credentials(header, 'bearer') || undefined;
}

/** What follows the scheme (any case) of an Authorization header, when it is that scheme. */
function credentials(header: string | null, scheme: 'basic' | 'bearer'): string | undefined {
  if (!header) return undefined;
  const [sent, value = ''] = header.trim().split(/\s+/, 2);
  return sent?.toLowerCase() === scheme ? value : undefined;
}

/**
 * A key's SHA-256 digest (base64), the one form every key is compared in (integrators', platforms' report keys,
 * the console's): equal lengths whatever was sent, and the time a comparison takes says nothing of how much of a
 * guessed key was right.
 */
export function keyDigest(key: string): string {
  return new Bun.CryptoHasher('sha256').update(key).digest('base64');
}

/** The 401 for a request whose key is missing or not known (the message says which). */
function unauthorized(request: Request): Response {
  return errorResponse(
    401,
    'UNAUTHORIZED',
    request.headers.has('x-api-key') ? 'the x-api-key is not known' : 'the x-api-key header is missing',
  );
}

/** A keyed POST route's own answer, once its key and body are read: the integrator and the JSON body's bytes. */
export type KeyedAnswer = (integrator: IntegratorSettings, body: Uint8Array) => Response | Promise<Response>;

/**
 * A keyed POST route (the Entitlement and Updates APIs): the integrator its key names (401), then its JSON body's
 * bytes (415, 413, 408), then `answer`. The checks every keyed body route starts with, in their one order.
 */
export function keyedPost(
  keys: ApiKeys,
  limits: BodyLimits,
  answer: KeyedAnswer,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const integrator = keys.check(request);
    if (integrator instanceof Response) return integrator;
    const body = await readJsonBytes(request, limits);
    return body instanceof Response ? body : answer(integrator, body);
  };
}
