import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The commands that run at the lowest CPU priority: --backup and --dump. Both only read a store, from one snapshot,
 * and are run beside a serving daemon on the same cores: at the priority they were started with, the Updates API
 * kept 0.59-0.71 of its rate during a backup (bench/operations.ts), lowered 0.70-0.86. On an idle machine they
 * run as fast.
 * Commands that write (--ingest, --import-updates, --harvest, --retry) keep their priority: a niced writer
 * holding the store's write lock would hold the daemon's writes behind it.
 */
const BACKGROUND_MODES: ReadonlySet<string> = new Set(['--backup', '--dump']);

/** nice 19 and not SCHED_IDLE: a starved reader would hold its snapshot, and so the store's old pages, for as long */
export const BACKGROUND_NICE = 19;

/**
 * Whether these arguments name a background command. Read from the raw arguments, before the program is loaded
 * (loading it is about half of a backup's CPU); held to parseArgs's reading by a test.
 */
export function runsInBackground(argv: readonly string[]): boolean {
  // an option's name is what comes before any `=` (`--backup=DIR`); a value given apart never starts with `--`
  return argv.some((a) => BACKGROUND_MODES.has(a.split('=', 1)[0]!));
}

/**
 * Lowers this process to `nice`. On Linux the nice value belongs to each thread: every thread the runtime has
 * started is lowered, and threads started later take their creator's. The threads are listed again until a listing
 * shows none not yet lowered (one a runtime thread started meanwhile took the old value). Best effort: a thread
 * that ended meanwhile is skipped, and where threads cannot be listed (no /proc) the calling thread alone is lowered.
 */
export function lowerOwnPriority(nice: number = BACKGROUND_NICE): void {
  const lowered = new Set<number>();
  for (let fresh = threadIds(); fresh.length > 0; fresh = threadIds().filter((t) => !lowered.has(t))) {
    for (const tid of fresh) {
      lowered.add(tid);
      try {
        setPriority(tid, nice);
      } catch {
        // the thread ended between the listing and now
      }
    }
  }
}

/** this process's threads (0: the calling one, where /proc cannot be read) */
function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [0];
  }
}
