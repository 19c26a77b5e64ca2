import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Fault, FaultError, fault } from '../../base/index.ts';
import { removeQuietly, syncMadeFolders, syncPath } from './durable-fs.ts';
import { lockFileOf } from './lmdb-file.ts';

/**
 * A backup's folder, whole or not at all (--backup DIR): filled as `DIR.partial` beside DIR and renamed to DIR once
 * every environment is copied, so a backup that failed part-way (production copied, staging out of disk) never
 * looks like a deliberate backup of fewer environments. `DIR.partial.pid` says which run fills it: a second backup
 * to the same DIR while one runs is refused rather than deleting its folder from under it.
 */

/**
 * A backup never overwrites: BACKUP_EXISTS when `target` is there already, unless it is an empty folder (made
 * beforehand by a script: `mkdir -p $D && doi-holdings --backup $D`), which the backup's folder replaces.
 */
export function backupRefused(target: string): Fault | undefined {
  if (!existsSync(target) || isEmptyFolder(target)) return undefined;
  return fault('BACKUP_EXISTS', `${target} exists already; a backup goes to a new (or empty) folder`);
}

function isEmptyFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory() && readdirSync(path).length === 0;
  } catch {
    return false;
  }
}

/** Fills `dir` through `write(partial)`; the folder appears, synced, only once `write` has returned. */
export async function writeBackupFolder<T>(dir: string, write: (partial: string) => Promise<T>): Promise<T> {
  const refused = backupRefused(dir);
  if (refused) throw new FaultError(refused);
  const whole = resolve(dir); // resolved: `DIR/` must not name `DIR/.partial`
  const partial = `${whole}.partial`;
  const failed = (e: unknown) =>
    e instanceof FaultError
      ? e
      : new FaultError(fault('BACKUP_FAILED', `cannot write ${dir}: ${(e as Error).message}`));
  let made: string | undefined;
  try {
    made = mkdirSync(dirname(whole), { recursive: true });
    claim(dir, partial);
  } catch (e) {
    throw failed(e);
  }
  let renamed = false;
  try {
    rmSync(partial, { recursive: true, force: true }); // left by a run that died: no backup
    mkdirSync(partial);
    const result = await write(partial);
    // each copy was opened to check it, which made its lock file: a backup holds the data files alone
    for (const e of readdirSync(partial, { withFileTypes: true }))
      if (e.isDirectory()) rmSync(lockFileOf(join(partial, e.name)), { force: true });
    syncPath(partial); // its entries (each environment's folder) are on disk before the name that makes it a backup
    renameSync(partial, whole); // over an empty DIR too: rename replaces an empty folder in one step
    renamed = true;
    syncMadeFolders(dirname(whole), made);
    return result;
  } catch (e) {
    // a DIR whose name may not be on disk is no backup either: "a backup that failed leaves none"
    removeQuietly(renamed ? whole : partial);
    throw failed(e);
  } finally {
    removeQuietly(`${partial}.pid`);
  }
}

/**
 * Takes `<partial>.pid` for this run (created exclusively); one naming a live process is another backup to the same
 * DIR: BACKUP_RUNNING. One whose process is gone was left by a death, and is taken over.
 */
function claim(dir: string, partial: string): void {
  const pidFile = `${partial}.pid`;
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(pidFile, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 0) throw e;
    }
    const owner = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner))
      throw new FaultError(
        fault(
          'BACKUP_RUNNING',
          `${dir}: another backup to it is running (process ${owner}, per ${pidFile}); wait for it, or remove that file if no such backup runs`,
        ),
      );
    rmSync(pidFile, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
