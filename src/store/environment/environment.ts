import { existsSync, mkdirSync } from 'node:fs';
import type { Database, Key, RootDatabase } from 'lmdb';
import { FaultError, fault } from '../../base/index.ts';
import type { ConflictEntry, FileEntry } from '../ledger/index.ts';
import { dataFileOf, type LmdbFileOptions, openLmdbFile, openTables, type Tables, table } from './lmdb-file.ts';

/**
 * One LMDB environment per deployment environment (production, staging), and the layout of its sub-databases
 * and meta keys (docs/design.md, "Store layout"). Only the store's own modules open it.
 */

/**
 * 2: an `updated` event's new-access byte carries change flags (holding-codec.ts). A version-1 store reads
 * correctly as it is (its events carry no flags) and is marked 2 when opened for writing, so that a version-1
 * program, which would misread the flags, refuses it.
 */
export const SCHEMA_VERSION = 2;
const UPGRADES_FROM: readonly number[] = [1];

/** Every key of the `meta` sub-database, named here once. */
export const META = {
  schemaVersion: 'schemaVersion',
  /** the next apply sequence number */
  nextSeq: 'nextSeq',
  /** moves whenever `updates` changes, so every process's read index reloads */
  updatesGen: 'updatesGen',
  /** the change feed's head (change-feed.ts, FeedHead) */
  changeFeed: 'changeFeed',
  /** the cursor (as text) of a client that has every change: an empty poll is one read and a compare */
  changeFeedTip: 'changeFeedTip',
  /** the rules the change feed's served lists were rendered by (change-feed.ts, SERVED_RULES) */
  servedRules: 'servedRules',
  /** live holdings of one platform */
  live: (platform: string) => `live:${platform}`,
  /**
   * the LMDB transaction id of this program's commit after which `filesByPlatform` was known to match the ledger
   * (platform-files.ts): a writable open and close write it, so an open that finds it the last commit reads nothing
   */
  platformIndexAt: 'platformIndexAt',
  /** the range of every `live` key, and the platform of one */
  liveRange: { start: 'live:', end: 'live;' },
  platformOfLive: (key: string) => key.slice('live:'.length),
  /** live holdings of one platform per access code, an array indexed by ACCESS_CODES (apply/live-counts.ts) */
  liveByAccess: (platform: string) => `liveByAccess:${platform}`,
  liveByAccessRange: { start: 'liveByAccess:', end: 'liveByAccess;' },
  platformOfLiveByAccess: (key: string) => key.slice('liveByAccess:'.length),
  /** the `nextSeq` the `liveByAccess` counters agree with; another (an older program applied files) or none: counted again */
  liveByAccessAt: 'liveByAccessAt',
  /** a sorted pass that began and has not ended (sorted-pass/apply-pass.ts, PassRecord), and its files (PassFile[]) */
  sortedPass: 'sortedPass',
  sortedPassFiles: 'sortedPassFiles',
  /** the platform's applied file that comes last in apply order, `{key, lastModified}` (late-files.ts) */
  newestApplied: (platform: string) => `newest:${platform}`,
  /** what the daemon remembers of an update source it follows: a dropped file's size and mtime, a URL's validators */
  sourceState: (kind: SourceKind, id: string) => `${SOURCE_STATE_PREFIX[kind]}:${id}`,
} as const;

/**
 * The sub-databases of a store, in the order a new one makes them: `meta` last (a read-only open takes a store
 * without it for one still being made).
 */
const STORE_TABLES = {
  /** key: utf8(doiKey) 0x00 utf8(platform); value: holding-codec bytes */
  holdings: table<Uint8Array, Uint8Array>({ keyEncoding: 'binary', encoding: 'binary' }),
  /** key: doiKey; value: UpdatesEntry (msgpack) */
  updates: table<any>({ encoding: 'msgpack' }),
  /** key: file key; value: FileEntry */
  files: table<FileEntry>({ encoding: 'msgpack' }),
  /** key: `${fileKey}\u0000${hash}`; value: ConflictEntry */
  conflicts: table<ConflictEntry>({ encoding: 'msgpack' }),
  /** key: [platform, lastModified, file key]; value: true (platform-files.ts: a platform's files, newest first) */
  filesByPlatform: table<true, Key>({ encoding: 'msgpack' }),
  /**
   * key: file key; value: true. A file whose report is not yet written back to its bucket (platform-files.ts,
   * putFileEntry marks it in the ledger entry's transaction; bucket/s3/report-writer.ts clears it once written)
   */
  reportsDue: table<true>({ encoding: 'msgpack' }),
  /** key: apply sequence number; value: file key (history events refer to files by number) */
  fileSeqs: table<string, number>({ keyEncoding: 'uint32', encoding: 'string' }),
  /** rows of update imports in progress (feed-import.ts); key: utf8(importId) 0x00 utf8(doiKey) 0x00 u32 row */
  importScratch: table<any, Uint8Array>({ keyEncoding: 'binary', encoding: 'msgpack' }),
  /** the change feed: key: change sequence number; value: ChangeRow (change-feed.ts), one per work, its latest change */
  changes: table<any, number>({ keyEncoding: 'uint32', encoding: 'msgpack' }),
  /** the feed's history: key: the number of a commit that changed the feed; value: LineageEntry (change-feed.ts) */
  changeLineage: table<any, number>({ keyEncoding: 'uint32', encoding: 'msgpack' }),
  /** META keys */
  meta: table<any>({ encoding: 'msgpack' }),
};

export type StoreDbs = {
  /** the environment's store folder (messages name it) */
  path: string;
  root: RootDatabase;
} & Tables<typeof STORE_TABLES>;

/** Moves `updatesGen` (in the caller's write transaction): every process's read index loads the update rows again. */
export function bumpUpdatesGen(dbs: StoreDbs): void {
  dbs.meta.putSync(META.updatesGen, ((dbs.meta.get(META.updatesGen) as number | undefined) ?? 0) + 1);
}

/** Every sub-database the environment opened (--stats counts their pages). */
export function subDatabases(dbs: StoreDbs): Database<unknown, Key>[] {
  return (Object.keys(STORE_TABLES) as (keyof typeof STORE_TABLES)[])
    .map((name) => dbs[name] as Database<unknown, Key> | undefined)
    .filter((d) => d !== undefined); // read-only, a table an older store lacks is not opened
}

export function openEnvironment(path: string, opts: LmdbFileOptions): StoreDbs {
  if (!opts.readOnly) mkdirSync(path, { recursive: true });
  // checked before lmdb-js opens it, which makes the folder even to read: a read where a typo points makes nothing
  else if (!existsSync(dataFileOf(path))) throw notMade(path);
  let root: RootDatabase;
  try {
    root = openLmdbFile(path, opts);
  } catch (e) {
    if (opts.readOnly && !existsSync(dataFileOf(path))) throw notMade(path); // gone since the check
    throw new FaultError(fault('STORE_OPEN_FAILED', `cannot open the store at ${path}: ${(e as Error).message}`));
  }
  const dbs: StoreDbs = { path, root, ...openTables(root, STORE_TABLES) };
  // read-only, a table not there is not opened: its store is being made by another process (the tables come after
  // the file; `meta` last), or is not a store of this program
  if (opts.readOnly && !dbs.meta) {
    void root.close();
    throw notMade(path);
  }
  checkSchemaVersion(dbs, path, opts.readOnly ?? false);
  return dbs;
}

/** A read-only open of a store that is not (yet) there: the commands that only read take it as holding nothing. */
function notMade(path: string): FaultError {
  return new FaultError(
    fault(
      'STORE_NOT_MADE',
      `there is no store at ${path} yet: the daemon or --ingest makes it; check store.dir and --env`,
    ),
  );
}

function checkSchemaVersion(dbs: StoreDbs, path: string, readOnly: boolean): void {
  const found = dbs.meta.get(META.schemaVersion) as number | undefined;
  if (found === undefined) {
    if (readOnly) return;
    dbs.root.transactionSync(() => {
      if (dbs.meta.get(META.schemaVersion) === undefined) dbs.meta.putSync(META.schemaVersion, SCHEMA_VERSION);
    });
    return;
  }
  if (UPGRADES_FROM.includes(found)) {
    // readable as it is; marking it keeps an older program from misreading what this one writes next
    if (!readOnly) dbs.root.transactionSync(() => dbs.meta.putSync(META.schemaVersion, SCHEMA_VERSION));
    return;
  }
  if (found !== SCHEMA_VERSION) {
    dbs.root.close();
    throw new FaultError(
      fault(
        'STORE_SCHEMA_MISMATCH',
        `the store at ${path} has schema version ${found}; this program reads version ${SCHEMA_VERSION}. ` +
          'Rebuild it from the bucket (move the folder away and restart) or run the matching program version.',
      ),
    );
  }
}

/** The kinds of update source whose state the store keeps: a dropped file, a fetched URL, a harvest. */
export type SourceKind = 'file' | 'url' | 'harvest';
const SOURCE_STATE_PREFIX: Record<SourceKind, string> = {
  file: 'updatesFile',
  url: 'updatesUrl',
  harvest: 'updatesHarvest',
};
