import type { IntegratorSettings } from '../../config/index.ts';
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
      byDigest.set(digest(i.apiKey), i);
      if (i.previousApiKey !== undefined) byDigest.set(digest(i.previousApiKey), i);
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
    const found = this.byDigest.get(digest(key));
    if (found) this.known.set(key, found);
    return found;
  }
}

function digest(key: string): string {
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

/** A keyed POST's first steps: the integrator its key names, then its JSON body's bytes; or the reply that ends it. */
export async function keyedBody(
  request: Request,
  keys: ApiKeys,
  limits: BodyLimits,
): Promise<{ integrator: IntegratorSettings; body: Uint8Array } | Response> {
  const integrator = keys.check(request);
  if (integrator instanceof Response) return integrator;
  const body = await readJsonBytes(request, limits);
  return body instanceof Response ? body : { integrator, body };
}
