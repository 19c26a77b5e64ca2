import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { fault, FaultError } from '../fault.ts';
import type { ConflictEntry, FileEntry } from './ledger-types.ts';

/** One LMDB environment per deployment environment (production, staging): DESIGN section 4. */

export const SCHEMA_VERSION = 1;

export interface StoreDbs {
  root: RootDatabase;
  /** key: utf8(doiKey) 0x00 utf8(platform); value: holding-codec bytes */
  holdings: Database<Uint8Array, Uint8Array>;
  /** key: doiKey; value: UpdatesEntry (msgpack) */
  updates: Database<any, string>;
  /** key: file key; value: FileEntry */
  files: Database<FileEntry, string>;
  /** key: `${fileKey}\u0000${hash}`; value: ConflictEntry */
  conflicts: Database<ConflictEntry, string>;
  /** key: apply sequence number; value: file key (history events refer to files by number) */
  fileSeqs: Database<string, number>;
  /** rows of update imports in progress (updates-import.ts); key: utf8(importId) 0x00 utf8(doiKey) 0x00 u32 row */
  importScratch: Database<any, Uint8Array>;
  /** schemaVersion, nextSeq, counters */
  meta: Database<any, string>;
}

export interface OpenOptions {
  mapSizeBytes: number;
  readOnly?: boolean;
}

export function openEnvironment(path: string, opts: OpenOptions): StoreDbs {
  if (!opts.readOnly) mkdirSync(path, { recursive: true });
  let root: RootDatabase;
  try {
    root = open({
      path: join(path, 'data.mdb'),
      noSubdir: true,
      maxDbs: 12,
      mapSize: opts.mapSizeBytes,
      // No writemap: measured here with this layout (bench/ingest.ts, same run), files applied one at a time
      // went 145k -> 180k records/s (initial load) and 78k -> 95k (churn) without it, as commits got cheaper;
      // queued batches were level. Sync commits either way (DESIGN section 4).
      useWritemap: false,
      compression: false,
      readOnly: opts.readOnly,
    });
  } catch (e) {
    throw new FaultError(fault('STORE_OPEN_FAILED', `cannot open the store at ${path}: ${(e as Error).message}`));
  }
  const dbs: StoreDbs = {
    root,
    holdings: root.openDB({ name: 'holdings', keyEncoding: 'binary', encoding: 'binary' }),
    updates: root.openDB({ name: 'updates', encoding: 'msgpack' }),
    files: root.openDB({ name: 'files', encoding: 'msgpack' }),
    conflicts: root.openDB({ name: 'conflicts', encoding: 'msgpack' }),
    fileSeqs: root.openDB({ name: 'fileSeqs', keyEncoding: 'uint32', encoding: 'string' }),
    importScratch: root.openDB({ name: 'importScratch', keyEncoding: 'binary', encoding: 'msgpack' }),
    meta: root.openDB({ name: 'meta', encoding: 'msgpack' }),
  };
  checkSchemaVersion(dbs, path, opts.readOnly ?? false);
  return dbs;
}

function checkSchemaVersion(dbs: StoreDbs, path: string, readOnly: boolean): void {
  const found = dbs.meta.get('schemaVersion') as number | undefined;
  if (found === undefined) {
    if (readOnly) return;
    dbs.root.transactionSync(() => {
      if (dbs.meta.get('schemaVersion') === undefined) dbs.meta.putSync('schemaVersion', SCHEMA_VERSION);
    });
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
