import { doiKey } from '../../doi/index.ts';
import { META, type StoreDbs } from '../environment/index.ts';
import { Reloading, type StoreLocation, type StoreRead, storeReadJob, type WarmRead } from '../read-models/index.ts';
import { liveRows, servedOfItem } from './change-feed.ts';
import { UpdatesTable, type UpdatesTableParts } from './updates-table.ts';
import { servedUpdates, type UpdatesEntry } from './work-updates.ts';

/** A table read from the store: the generation it read first, and how long the read took. */
export interface BuiltTable {
  gen: number;
  parts: UpdatesTableParts;
  ms: number;
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
 * requested DOIs have no updates, so a miss is one hash-table probe and never touches LMDB (docs/performance.md,
 * "Measurements that shaped the design"). Reloaded when the store's `updatesGen` moves (an import by this
 * process or by another one): on this thread while that is quick, else on another (Reloading).
 */
export class UpdatesIndex {
  private current: UpdatesTable | undefined;
  private checkedAt = 0;
  private readonly recheckMs: number;
  private readonly now: () => number;
  private readonly reloading: Reloading<UpdatesTable>;

  constructor(
    dbs: StoreDbs,
    opts: {
      /** how often (ms) the generation counter is re-read; 0 = every call (default 250) */
      recheckMs?: number;
      now?: () => number;
      /** where slow reloads are read; none: always here */
      builder?: TableBuilder;
      where?: StoreLocation;
      slowBuildMs?: number;
      /** a read on the worker failed */
      onFailed?: (error: string) => void;
    } = {},
  ) {
    this.recheckMs = opts.recheckMs ?? 250;
    this.now = opts.now ?? (() => performance.now()); // a step of the time of day must not stop the re-checks
    const { builder, where } = opts;
    const asRead = (b: BuiltTable): StoreRead<UpdatesTable> => ({
      value: new UpdatesTable(b.parts),
      version: b.gen,
      ms: b.ms,
    });
    this.reloading = new Reloading({
      version: () => generationOf(dbs),
      readHere: () => asRead(readUpdatesTable(dbs)),
      readElsewhere:
        builder && where
          ? () => {
              const job = builder(where);
              return { done: job.done.then(asRead), cancel: job.cancel };
            }
          : undefined,
      slowMs: opts.slowBuildMs,
      onFailed: opts.onFailed,
    });
  }

  /** The current table (DOI key -> JSON array as UTF-8), refreshed once: a 100-DOI request reads one snapshot. */
  table(): UpdatesTable {
    this.refresh();
    return this.current!;
  }

  get size(): number {
    return this.table().size;
  }

  /** `force`: the store's current generation is read here, now (tests, and callers that must see their own import). */
  refresh(force = false): void {
    const t = this.now();
    if (!force && t - this.checkedAt < this.recheckMs && this.current) return;
    this.checkedAt = t;
    this.current = this.reloading.get(force);
  }

  /** Starts reading the table on a worker (a daemon starting: Reloading.warm). */
  warm(): Promise<WarmRead> {
    return this.reloading.warm();
  }

  /** Ends a read on another thread (the store is closing). */
  close(): void {
    this.reloading.close();
  }
}

/** Reads tables on a worker thread (store/updates/read-worker.ts), one per read. `script`: another worker (tests). */
export function workerTableBuilder(script?: string): TableBuilder {
  return (where) => storeReadJob<BuiltTable>({ kind: 'updates', ...where }, 'the updates index worker', script);
}
