import { closeSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** What makes a backup's names and bytes survive a host crash (store-file.ts, backup-folder.ts). */

/** fsync of a file or a folder (its entries); Linux takes it on a descriptor opened read-only. */
export function syncPath(path: string): void {
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
export function syncMadeFolders(folder: string, made: string | undefined): void {
  const top = resolve(made === undefined ? folder : dirname(made));
  for (let f = resolve(folder); ; f = dirname(f)) {
    syncPath(f);
    if (f === top || f === dirname(f)) return;
  }
}

export function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // nothing there to remove
  }
}
