import { statBucketFileSync, type FileStat } from './file-stat.ts';
import { scanBucketFolder } from './local-scan.ts';

/** The ingestor's answer to "is this version of the file queued, applied or quarantined already?" */
export type HoldsFile = (key: string, stat: FileStat) => boolean;

/** files stat'ed between two yields to the event loop: a few ms at most, so requests are not held up */
const STATS_PER_TURN = 256;

export interface RescanOptions {
  /** only the files below this folder of the bucket */
  under?: string;
  /** write-finish detection, as the watch's: a file is handed on only once its size and time held this long */
  settleMs: number;
  holds: HoldsFile;
}

/**
 * The files of a bucket folder that the ingestor does not hold and that are not being written: what a folder
 * watch missed (a file written into a folder in the instant the watch takes it up, a lost event, a full inotify
 * table). A file found unknown is checked again after settleMs; one still growing is left to the watch's own
 * write-finish event, or to the next rescan.
 */
export async function missedFiles(root: string, opts: RescanOptions): Promise<string[]> {
  const unknown = new Map<string, FileStat>();
  const keys = await scanBucketFolder(root, { everyEntry: true, under: opts.under });
  for (let i = 0; i < keys.length; i++) {
    if (i % STATS_PER_TURN === STATS_PER_TURN - 1) await Bun.sleep(0);
    const stat = statOrGone(root, keys[i]!);
    if (stat && !opts.holds(keys[i]!, stat)) unknown.set(keys[i]!, stat);
  }
  if (unknown.size === 0) return [];
  await Bun.sleep(opts.settleMs);
  const settled: string[] = [];
  for (const [key, before] of unknown) {
    const now = statOrGone(root, key);
    if (now && now.size === before.size && now.lastModified === before.lastModified && !opts.holds(key, now)) settled.push(key);
  }
  return settled;
}

/** A file removed since the listing is simply not there any more; any other failure is the rescan's. */
function statOrGone(root: string, key: string): FileStat | undefined {
  try {
    return statBucketFileSync(root, key);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
