import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isHiddenOrTemp } from '../deposit/index.ts';

/** Every file under a bucket folder as bucket keys (`/`-separated), hidden and temp files left out. */
export async function scanBucketFolder(root: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const keys: string[] = [];
  for (const e of entries) {
    if (!e.isFile()) continue;
    const key = toKey(root, join(e.parentPath, e.name));
    if (!isHiddenOrTemp(key)) keys.push(key);
  }
  return keys;
}

export function toKey(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}
