import type { IntegratorSettings } from '../config/index.ts';

/**
 * `x-api-key` lookup. Keys are compared through their SHA-256 digests, so the time a lookup takes says nothing
 * about how much of a guessed key was right.
 */
export class ApiKeys {
  private readonly byDigest = new Map<string, IntegratorSettings>();
  /** keys already matched through their digest: an integrator's next request skips the hashing */
  private readonly known = new Map<string, IntegratorSettings>();

  constructor(integrators: readonly IntegratorSettings[]) {
    for (const i of integrators) this.byDigest.set(digest(i.apiKey), i);
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
