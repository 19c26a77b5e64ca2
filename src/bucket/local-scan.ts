import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isHiddenOrTemp, undecodableNameFault } from '../deposit/index.ts';

/**
 * Every file under a bucket folder as bucket keys (`/`-separated), hidden and temp names left out. A linked
 * folder is not entered. `everyEntry`: symbolic links, FIFOs and the like too, not only regular files (a deposit
 * bucket: the ingestor refuses them, NOT_REGULAR_FILE, so that they are reported rather than passed over).
 * `under`: only the files below this folder of the bucket (a key prefix without its trailing `/`).
 */
export async function scanBucketFolder(
  root: string,
  opts: { everyEntry?: boolean; under?: string } = {},
): Promise<string[]> {
  const keys: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      // a folder whose name is not UTF-8 (U+FFFD for its bad bytes) cannot be listed by that name: listed itself,
      // for the ingestor to refuse (BAD_PATH) rather than passed over without a word. Else gone: no bucket folder
      // yet, or removed during the scan.
      if (opts.everyEntry && undecodableNameFault(toKey(root, dir), e)) keys.push(toKey(root, dir));
      else if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return;
    }
    for (const e of entries) {
      const key = toKey(root, join(dir, e.name));
      if (isHiddenOrTemp(key)) continue;
      if (e.isDirectory()) await walk(join(dir, e.name));
      else if (opts.everyEntry || e.isFile()) keys.push(key);
    }
  };
  await walk(opts.under ? join(root, opts.under) : root);
  return keys;
}

export function toKey(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}
