import { doiKey } from '../doi/index.ts';
import { workerJob, workerScript } from '../worker-script.ts';
import { liveRows, servedOfItem } from './change-feed.ts';
import { META, openEnvironment, type StoreDbs } from './environment.ts';
import { UpdatesTable, type UpdatesTableParts } from './updates-table.ts';
import { servedUpdates, type UpdatesEntry } from './work-updates.ts';

/** A rebuild whose read took longer than this is done on another thread the next time. */
export const SLOW_BUILD_MS = 50;

/** A table read from the store: the generation it read first, and how long the read took. */
export interface BuiltTable {
  gen: number;
  parts: UpdatesTableParts;
  ms: number;
}

/** Where a build on another thread opens the store (read-only: LMDB shares it between threads). */
export interface StoreLocation {
  path: string;
  mapSizeBytes: number;
}

/** Reads a whole table on another thread (workerTableBuilder below); `cancel` ends that build. */
export type TableBuilder = (where: StoreLocation) => { done: Promise<BuiltTable>; cancel(): void };

/**
 * Every work with a served list, and the store's updates generation, read before the lists: a commit after that
 * read gives a newer generation, so the next refresh builds again. The one build, on this thread or another.
 * The lists come from the change feed, which holds every work with updates, its list rendered as the API serves
 * it (a third of the time of decoding every work's entry with its history and rendering it again); a store whose
 * feed has not been started yet (one made before it, opened read-only) is rendered from its entries.
 */
export function readUpdatesTable(dbs: StoreDbs): BuiltTable {
  const started = performance.now();
  const gen = generationOf(dbs);
  const encoder = new TextEncoder();
  const entries: [string, Uint8Array][] = [];
  if (dbs.meta.get(META.changeFeed) !== undefined) {
    for (const [, doi, , item] of liveRows(dbs)) entries.push([doiKey(doi), encoder.encode(servedOfItem(item))]);
  } else {
    for (const { key, value } of dbs.updates.getRange()) {
      const served = servedUpdates(value as UpdatesEntry);
      if (served.length > 0) entries.push([key as string, encoder.encode(JSON.stringify(served))]);
    }
  }
  return { gen, parts: UpdatesTable.of(entries).parts(), ms: performance.now() - started };
}

function generationOf(dbs: StoreDbs): number {
  return (dbs.meta.get(META.updatesGen) as number | undefined) ?? 0;
}

/**
 * The read side of the Updates API: every work with updates, its served list pre-rendered as JSON. Most
 * requested DOIs have no updates, so a miss is one hash-table probe and never touches LMDB (docs/design.md,
 * "Measurements that shaped the design").
 * Reloaded when the store's `updatesGen` moves (an import by this process or by another one). A reload is read
 * on this thread while that is quick; once a read took more than SLOW_BUILD_MS (a harvest's hundreds of
 * thousands of works take seconds), the next is read on another thread and the current table answers until
 * it lands, so requests never wait for a reload.
 */
export class UpdatesIndex {
  private current = UpdatesTable.of([]);
  private gen = -1;
  private checkedAt = 0;
  private lastReadMs = 0;
  private building: { cancel(): void } | undefined;
  private readonly recheckMs: number;
  private readonly now: () => number;

  constructor(
    private readonly dbs: StoreDbs,
    private readonly opts: {
      /** how often (ms) the generation counter is re-read; 0 = every call (default 250) */
      recheckMs?: number;
      now?: () => number;
      /** where slow reloads are read; none: always here */
      builder?: TableBuilder;
      where?: StoreLocation;
      slowBuildMs?: number;
    } = {},
  ) {
    this.recheckMs = opts.recheckMs ?? 250;
    this.now = opts.now ?? Date.now;
  }

  /** The current table (DOI key -> JSON array as UTF-8), refreshed once: a 100-DOI request reads one snapshot. */
  table(): UpdatesTable {
    this.refresh();
    return this.current;
  }

  get size(): number {
    return this.table().size;
  }

  /** `force`: the store's current generation is read here, now (tests, and callers that must see their own import). */
  refresh(force = false): void {
    const t = this.now();
    if (!force && t - this.checkedAt < this.recheckMs && this.gen >= 0) return;
    this.checkedAt = t;
    if (generationOf(this.dbs) === this.gen) return;
    const { builder, where } = this.opts;
    if (!force && this.gen >= 0 && builder && where && this.lastReadMs > (this.opts.slowBuildMs ?? SLOW_BUILD_MS)) return this.readElsewhere(builder, where);
    this.land(readUpdatesTable(this.dbs));
  }

  /** Ends a read on another thread (the store is closing). */
  close(): void {
    this.building?.cancel();
    this.building = undefined;
  }

  private readElsewhere(builder: TableBuilder, where: StoreLocation): void {
    if (this.building) return; // when it lands, the next refresh sees whether the store moved on meanwhile
    const build = builder(where);
    this.building = build;
    build.done.then(
      (built) => {
        if (this.building === build && built.gen > this.gen) this.land(built);
      },
      // read here next time (nothing is lost: the current table answers meanwhile)
      () => (this.lastReadMs = 0),
    ).finally(() => {
      if (this.building === build) this.building = undefined;
    });
  }

  private land(built: BuiltTable): void {
    this.current = new UpdatesTable(built.parts);
    this.gen = built.gen;
    this.lastReadMs = built.ms;
  }
}

/** Reads tables on a worker thread (updates-index-worker.ts), one per read; the buffers are transferred, not copied. */
export function workerTableBuilder(script = workerScript('store/updates-index-worker.ts')): TableBuilder {
  return (where) => workerJob<BuiltTable>(script, where, 'the updates index worker');
}
