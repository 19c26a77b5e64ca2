import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FaultError, fault } from '../../base/index.ts';
import type { EnvName } from '../../config/index.ts';
import { removeQuietly, syncPath } from './durable-fs.ts';
import { type StoreDbs, subDatabases } from './environment.ts';
import { dataFileOf } from './lmdb-file.ts';

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
  const root = dbs.root.getStats() as TreeStats & {
    pageSize: number;
    lastPageNumber: number;
    mapSize: number;
    free: TreeStats;
  };
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

/**
 * Copies the store, compacted, from one read snapshot (writers go on meanwhile: LMDB readers never block them) to
 * `target`, in a backup folder that becomes one only once whole (backup-folder.ts), synced to disk: LMDB's copy
 * (mdb_env_copy2) only closes its file, and a crash could leave the name with no bytes.
 */
export async function copyStore(dbs: StoreDbs, target: string): Promise<void> {
  try {
    mkdirSync(dirname(target), { recursive: true });
    await dbs.root.backup(target, true);
    syncPath(target);
    syncPath(dirname(target));
  } catch (e) {
    removeQuietly(target); // where the folder could not be made there is nothing to remove, and rm may say so
    throw new FaultError(fault('BACKUP_FAILED', `cannot write ${target}: ${(e as Error).message}`));
  }
}

/** Pages in use, and the holdings' share of them. */
export function spaceUsage(dbs: StoreDbs): SpaceUsage {
  const root = dbs.root.getStats() as { pageSize: number; lastPageNumber: number };
  const h = dbs.holdings.getStats() as {
    entryCount: number;
    treeBranchPageCount: number;
    treeLeafPageCount: number;
    overflowPages: number;
  };
  return {
    pageSize: root.pageSize,
    usedPages: root.lastPageNumber + 1,
    holdings: { entries: h.entryCount, pages: h.treeBranchPageCount + h.treeLeafPageCount + h.overflowPages },
  };
}

/** Page figures of the LMDB file: what bytes per holding is measured from. */
export interface SpaceUsage {
  pageSize: number;
  /** pages in use up to the last one written (the file may be larger: the map is allocated ahead) */
  usedPages: number;
  holdings: { entries: number; pages: number };
}
