import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EnvName } from '../config/index.ts';
import { fault, FaultError, type Fault } from '../fault.ts';
import { dataFileOf, subDatabases, type StoreDbs } from './environment.ts';
import type { SpaceUsage } from './store-types.ts';

/** The LMDB file as a file: its page figures, and consistent compacted copies of it in backup folders (--stats, --backup). */

export interface PageFigures {
  path: string;
  /** bytes on disk (the map is allocated ahead: pages past usedPages are not written yet) */
  fileBytes: number;
  mapSizeBytes: number;
  pageSize: number;
  /** pages up to the last one written */
  usedPages: number;
  /**
   * pages below that which no tree holds: free for reuse (LMDB's freelist, also pages a reader still sees).
   * A compacting backup leaves them out.
   */
  freePages: number;
}

type TreeStats = { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
const pagesOf = (s: TreeStats) => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;

export function pageFigures(dbs: StoreDbs, path: string): PageFigures {
  const root = dbs.root.getStats() as TreeStats & { pageSize: number; lastPageNumber: number; mapSize: number; free: TreeStats };
  // every sub-database (a tree left out here would count its pages as free)
  const trees = subDatabases(dbs).map((d) => d.getStats() as TreeStats);
  const usedPages = root.lastPageNumber + 1;
  // two meta pages, the main tree (names of the sub-databases), the freelist tree itself, and every sub-database
  const inTrees = 2 + pagesOf(root) + pagesOf(root.free) + trees.reduce((n, s) => n + pagesOf(s), 0);
  return {
    path,
    fileBytes: statSync(path).size,
    mapSizeBytes: root.mapSize,
    pageSize: root.pageSize,
    usedPages,
    freePages: Math.max(0, usedPages - inTrees),
  };
}

/** Where a store's file lives under a store folder: `<dir>/<env>/data.mdb` (Store.open's and openEnvironment's layout). */
export function storeFileIn(dir: string, env: EnvName): string {
  return dataFileOf(join(dir, env));
}

/** A backup never overwrites: BACKUP_EXISTS when `target` is there already (a `.partial` left by a death is not a backup). */
export function backupRefused(target: string): Fault | undefined {
  return existsSync(target) ? fault('BACKUP_EXISTS', `${target} exists already; a backup goes to a new folder`) : undefined;
}

/** Where writeBackupFolder fills a backup folder before it is one (resolved: `DIR/` must not name `DIR/.partial`). */
function partialFolderOf(dir: string): string {
  return `${resolve(dir)}.partial`;
}

/**
 * Makes the backup folder `dir` whole or not at all: `write` fills `<dir>.partial` (partialFolderOf), which is
 * renamed to `dir` once `write` has returned, so a backup that failed part-way (production copied, staging out of
 * disk) never looks like a deliberate backup of fewer environments. A partial folder is removed when anything fails,
 * and one left by a killed run is replaced. An existing `dir` is refused (backupRefused): a backup is a new folder.
 */
export async function writeBackupFolder<T>(dir: string, write: (partial: string) => Promise<T>): Promise<T> {
  const refused = backupRefused(dir);
  if (refused) throw new FaultError(refused);
  const [whole, partial] = [resolve(dir), partialFolderOf(dir)];
  const failed = (e: unknown) => new FaultError(fault('BACKUP_FAILED', `cannot write ${dir}: ${(e as Error).message}`));
  let made: string | undefined;
  try {
    made = mkdirSync(dirname(whole), { recursive: true });
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial);
  } catch (e) {
    removeQuietly(partial);
    throw failed(e);
  }
  try {
    const result = await write(partial);
    try {
      syncPath(partial); // its entries (each environment's folder) are on disk before the name that makes it a backup
      renameSync(partial, whole);
      syncMadeFolders(dirname(whole), made);
    } catch (e) {
      throw failed(e);
    }
    return result;
  } catch (e) {
    removeQuietly(partial);
    throw e;
  }
}

/**
 * Copies the store, compacted, from one read snapshot (writers go on meanwhile: LMDB readers never block them) to
 * `target` by way of `<target>.partial`, synced and renamed when complete, so a copy that died half-way (or a host
 * that crashed soon after) is never taken for a backup. An existing target is refused (backupRefused).
 */
export async function copyStore(dbs: StoreDbs, target: string): Promise<void> {
  const refused = backupRefused(target);
  if (refused) throw new FaultError(refused);
  const partial = `${target}.partial`;
  try {
    const made = mkdirSync(dirname(target), { recursive: true });
    rmSync(partial, { force: true });
    await dbs.root.backup(partial, true);
    // LMDB's copy (mdb_env_copy2) only closes the file: unsynced, a crash could leave the renamed name with no bytes
    syncPath(partial);
    renameSync(partial, target);
    syncMadeFolders(dirname(target), made);
  } catch (e) {
    removeQuietly(partial); // where the folder could not be made there is nothing to remove, and rm may say so
    throw new FaultError(fault('BACKUP_FAILED', `cannot write ${target}: ${(e as Error).message}`));
  }
}

/** fsync of a file or a folder (its entries); Linux takes it on a descriptor opened read-only. */
function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Syncs `folder`, where a name was just put, and each folder above it up to the one that holds `made` (the first
 * folder mkdirSync's recursive call made, if any), so that the new folders' names are on disk too.
 */
function syncMadeFolders(folder: string, made: string | undefined): void {
  const top = resolve(made === undefined ? folder : dirname(made));
  for (let f = resolve(folder); ; f = dirname(f)) {
    syncPath(f);
    if (f === top || f === dirname(f)) return;
  }
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // nothing there to remove
  }
}

/** Pages in use, and the holdings' share of them. */
export function spaceUsage(dbs: StoreDbs): SpaceUsage {
  const root = dbs.root.getStats() as { pageSize: number; lastPageNumber: number };
  const h = dbs.holdings.getStats() as { entryCount: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
  return {
    pageSize: root.pageSize,
    usedPages: root.lastPageNumber + 1,
    holdings: { entries: h.entryCount, pages: h.treeBranchPageCount + h.treeLeafPageCount + h.overflowPages },
  };
}
