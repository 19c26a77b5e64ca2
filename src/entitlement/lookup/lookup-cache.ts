/** A resolved lookup, in a list from least to most recently used. */
interface Entry {
  key: string;
  doi: string;
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * Resolved lookups (normalised metadata -> DOI), bounded by count, the least recently used out. Only DOIs found
 * are kept: "Crossref found nothing" may change the day the published version is registered, and a failure says
 * nothing. Use order is a list of its own, as in the answer cache (answer-cache.ts says why not the Map's order).
 */
export class LookupCache {
  private readonly entries = new Map<string, Entry>();
  private oldest: Entry | undefined;
  private newest: Entry | undefined;

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): string | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.unlink(e);
    this.append(e);
    return e.doi;
  }

  set(key: string, doi: string): void {
    if (this.maxEntries <= 0) return;
    const old = this.entries.get(key);
    if (old) {
      old.doi = doi;
      this.unlink(old);
      this.append(old);
      return;
    }
    const e: Entry = { key, doi, older: undefined, newer: undefined };
    this.entries.set(key, e);
    this.append(e);
    while (this.entries.size > this.maxEntries && this.oldest) {
      const out = this.oldest;
      this.unlink(out);
      this.entries.delete(out.key);
    }
  }

  private append(e: Entry): void {
    e.older = this.newest;
    e.newer = undefined;
    if (this.newest) this.newest.newer = e;
    else this.oldest = e;
    this.newest = e;
  }

  private unlink(e: Entry): void {
    if (e.older) e.older.newer = e.newer;
    else this.oldest = e.newer;
    if (e.newer) e.newer.older = e.older;
    else this.newest = e.older;
    e.older = e.newer = undefined;
  }
}
