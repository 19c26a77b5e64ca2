import { META, type StoreDbs } from './environment.ts';
import { UpdatesTable } from './updates-table.ts';
import { servedUpdates, type UpdatesEntry } from './work-updates.ts';

/**
 * The read side of the Updates API: every work with updates, its served list pre-rendered as JSON. Most
 * requested DOIs have no updates, so a miss is one hash-table probe and never touches LMDB (docs/design.md,
 * "Measurements that shaped the design").
 * Reloaded when the store's `updatesGen` moves (an import by this process or by the CLI in another one).
 */
export class UpdatesIndex {
  private current = new UpdatesTable(new Map());
  private gen = -1;
  private checkedAt = 0;

  constructor(
    private readonly dbs: StoreDbs,
    /** how often (ms) the generation counter is re-read; 0 = every call */
    private readonly recheckMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** The current table (DOI key -> JSON array as UTF-8), refreshed once: a 100-DOI request reads one snapshot. */
  table(): UpdatesTable {
    this.refresh();
    return this.current;
  }

  get size(): number {
    return this.table().size;
  }

  refresh(force = false): void {
    const t = this.now();
    if (!force && t - this.checkedAt < this.recheckMs && this.gen >= 0) return;
    this.checkedAt = t;
    const gen = (this.dbs.meta.get(META.updatesGen) as number | undefined) ?? 0;
    if (gen === this.gen) return;
    const nextBytes = new Map<string, Uint8Array>();
    const encoder = new TextEncoder();
    for (const { key, value } of this.dbs.updates.getRange()) {
      const served = servedUpdates(value as UpdatesEntry);
      if (served.length === 0) continue;
      nextBytes.set(key as string, encoder.encode(JSON.stringify(served)));
    }
    this.current = new UpdatesTable(nextBytes);
    this.gen = gen;
  }
}
