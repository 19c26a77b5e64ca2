import { join } from 'node:path';
import { type Database, type DatabaseOptions, type Key, open, type RootDatabase } from 'lmdb';

/**
 * An LMDB file as this program opens one, and its sub-databases declared once each (name, encodings, types): the
 * store environment's (environment.ts). The push alerts' subscriptions file (webhooks/subscriptions-db.ts) is
 * opened with the same settings; it is not the store's, so these take no store types.
 */

/** The LMDB file of a folder (`noSubdir`: the lock file sits beside it as data.mdb-lock). */
export function dataFileOf(folder: string): string {
  return join(folder, 'data.mdb');
}

/** The lock file LMDB makes beside the data file on any open, a read-only one too (its reader table). */
export function lockFileOf(folder: string): string {
  return `${dataFileOf(folder)}-lock`;
}

export interface LmdbFileOptions {
  mapSizeBytes: number;
  readOnly?: boolean;
}

/** Opens the LMDB file of `folder` (which must be there); its sub-databases are opened by openTables. */
export function openLmdbFile(folder: string, opts: LmdbFileOptions): RootDatabase {
  return open({
    path: dataFileOf(folder),
    noSubdir: true,
    maxDbs: 12,
    mapSize: opts.mapSizeBytes,
    // No writemap: measured with the store's layout (bench/ingest.ts, same run), files applied one at a time
    // went 145k -> 180k records/s (initial load) and 78k -> 95k (churn) without it, as commits got cheaper;
    // queued batches were level. Sync commits either way (docs/design.md, "Durability").
    useWritemap: false,
    // Every write is a transaction (write-failure.ts). With lmdb-js's event-turn batching, each failed commit
    // also rejected a promise of its own that nobody holds (an unhandled rejection, measured with lmdb-js 3.5.6
    // on a full tmpfs); transactions are grouped per turn either way.
    eventTurnBatching: false,
    compression: false,
    readOnly: opts.readOnly,
  });
}

/** A sub-database: how its keys and values are encoded, and what they are (for the type checker only). */
export interface Table<V, K extends Key> {
  readonly keyEncoding?: DatabaseOptions['keyEncoding'];
  readonly encoding: DatabaseOptions['encoding'];
  /** never set: carries V and K to Tables */
  readonly types?: { value: V; key: K };
}

/** A sub-database of values V under keys K (string keys unless said). */
export const table = <V, K extends Key = string>(encodings: Omit<Table<V, K>, 'types'>): Table<V, K> => encodings;

/** The open sub-databases of a file, by the names of its tables. */
export type Tables<T> = { [N in keyof T]: T[N] extends Table<infer V, infer K> ? Database<V, K> : never };

/**
 * Opens each table under its own name, in the order declared: in a new file they are made in that order. A
 * read-only open leaves a table the file does not hold undefined.
 */
export function openTables<T extends Record<string, Table<any, any>>>(root: RootDatabase, tables: T): Tables<T> {
  const dbs: Record<string, Database> = {};
  for (const [name, encodings] of Object.entries(tables)) dbs[name] = root.openDB({ name, ...encodings });
  return dbs as Tables<T>;
}
