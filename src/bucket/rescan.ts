import { undecodableNameFault } from '../deposit/index.ts';
import { type FileStat, statBucketFileSync } from './file-stat.ts';
import { scanBucketFolder } from './local-scan.ts';

/**
 * The ingestor's answer to "is this version of the file queued, applied or quarantined already?"; without a stat
 * (a name that is not UTF-8 cannot be stat'ed), whether the key was refused already.
 */
export type HoldsFile = (key: string, stat: FileStat | undefined) => boolean;

/** files stat'ed between two yields to the event loop: a few ms at most, so requests are not held up */
const STATS_PER_TURN = 256;

interface RescanOptions {
  /** only the files below this folder of the bucket */
  under?: string;
  /** write-finish detection, as the watch's: a file is handed on only once its size and time held this long */
  settleMs: number;
  holds: HoldsFile;
  /** true once the listing is no longer wanted (its watch closed): it ends at the next turn, handing on nothing */
  stopped?: () => boolean;
  /** told of an entry that cannot be stat'ed (other than gone): it is skipped, the rest listed */
  unreadable?: (key: string, error: unknown) => void;
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
  const stopped = opts.stopped ?? (() => false);
  // a name that is not UTF-8 is listed with U+FFFD for its bad bytes, and is not there by that name: handed on
  // (unless refused already), for the ingestor to say so once (BAD_PATH), rather than taken for gone
  const undecodable: string[] = [];
  const stat = (key: string) =>
    statOrGone(root, key, opts.unreadable, (k) => void (opts.holds(k, undefined) || undecodable.push(k)));
  for (let i = 0; i < keys.length; i++) {
    if (i % STATS_PER_TURN === STATS_PER_TURN - 1) await Bun.sleep(0);
    if (stopped()) return [];
    const s = stat(keys[i]!);
    if (s && !opts.holds(keys[i]!, s)) unknown.set(keys[i]!, s);
  }
  if (unknown.size === 0) return undecodable;
  const refused = [...undecodable];
  const still = await heldStill(unknown, opts.settleMs, stat);
  if (stopped()) return [];
  return [...refused, ...still.filter((key) => !opts.holds(key, unknown.get(key)!))];
}

/**
 * Of files listed with their stats, those whose size and time are the same `ms` later: one being written (or gone)
 * is left out. The settle rule of a rescan, and of the update drop folder's start-up scan.
 */
export async function heldStill(
  listed: ReadonlyMap<string, FileStat>,
  ms: number,
  stat: (key: string) => FileStat | undefined,
): Promise<string[]> {
  if (listed.size === 0) return [];
  await Bun.sleep(ms);
  const out: string[] = [];
  for (const [key, before] of listed) {
    const now = stat(key);
    if (now && now.size === before.size && now.lastModified === before.lastModified) out.push(key);
  }
  return out;
}

/**
 * A file removed since the listing is simply not there any more; one that cannot be stat'ed is told of, and
 * skipped; one whose name is not UTF-8 goes to `undecodable`.
 */
function statOrGone(
  root: string,
  key: string,
  unreadable: ((key: string, error: unknown) => void) | undefined,
  undecodable: (key: string) => void,
): FileStat | undefined {
  try {
    return statBucketFileSync(root, key);
  } catch (e) {
    if (undecodableNameFault(key, e)) undecodable(key);
    else if ((e as NodeJS.ErrnoException).code !== 'ENOENT') unreadable?.(key, e);
    return undefined;
  }
}
