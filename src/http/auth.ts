import type { IntegratorSettings } from '../config/index.ts';

/**
 * `x-api-key` lookup. Keys are compared through their SHA-256 digests, so the time a lookup takes says nothing
 * about how much of a guessed key was right.
 */
export class ApiKeys {
  private readonly byDigest = new Map<string, IntegratorSettings>();

  constructor(integrators: readonly IntegratorSettings[]) {
    for (const i of integrators) this.byDigest.set(digest(i.apiKey), i);
  }

  find(key: string | null): IntegratorSettings | undefined {
    if (!key) return undefined;
    return this.byDigest.get(digest(key));
  }
}

function digest(key: string): string {
  return new Bun.CryptoHasher('sha256').update(key).digest('base64');
}
