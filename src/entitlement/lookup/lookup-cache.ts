import { LruMap } from '../../base/index.ts';

/**
 * Resolved lookups (normalised metadata -> DOI), bounded by count, the least recently used out. Only DOIs found
 * are kept: "Crossref found nothing" may change the day the published version is registered, and a failure says
 * nothing.
 */
export class LookupCache {
  private readonly entries = new LruMap<string, string>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): string | undefined {
    return this.entries.get(key);
  }

  set(key: string, doi: string): void {
    if (this.maxEntries <= 0) return;
    this.entries.set(key, doi);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.oldest()!);
  }
}
