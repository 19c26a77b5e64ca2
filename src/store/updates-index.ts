import type { StoreDbs } from './environment.ts';
import { servedUpdates, type UpdatesEntry } from './updates-store.ts';

/**
 * The read side of the Updates API: every work with updates, its served list pre-rendered as JSON. Most
 * requested DOIs have no updates, so a miss is one Map lookup and never touches LMDB (PERFORMANCE.md).
 * Reloaded when the store's `updatesGen` moves (an import by this process or by the CLI in another one).
 */
export class UpdatesIndex {
  private json = new Map<string, string>();
  private gen = -1;
  private checkedAt = 0;

  constructor(
    private readonly dbs: StoreDbs,
    /** how often (ms) the generation counter is re-read; 0 = every call */
    private readonly recheckMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** The served updates of a DOI key as a JSON array text; `[]` when none are known. */
  updatesJson(doiKey: string): string {
    this.refresh();
    return this.json.get(doiKey) ?? '[]';
  }

  /** The current table (DOI key -> JSON array text), refreshed once: a 100-DOI request looks up in one snapshot. */
  table(): ReadonlyMap<string, string> {
    this.refresh();
    return this.json;
  }

  has(doiKey: string): boolean {
    this.refresh();
    return this.json.has(doiKey);
  }

  get size(): number {
    this.refresh();
    return this.json.size;
  }

  refresh(force = false): void {
    const t = this.now();
    if (!force && t - this.checkedAt < this.recheckMs && this.gen >= 0) return;
    this.checkedAt = t;
    const gen = (this.dbs.meta.get('updatesGen') as number | undefined) ?? 0;
    if (gen === this.gen) return;
    const next = new Map<string, string>();
    for (const { key, value } of this.dbs.updates.getRange()) {
      const served = servedUpdates(value as UpdatesEntry);
      if (served.length > 0) next.set(key as string, JSON.stringify(served));
    }
    this.json = next;
    this.gen = gen;
  }
}
