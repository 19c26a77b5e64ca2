import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';

/** Where the mirror keeps a replaced copy of an object, under its folder (hidden: never ingested). */
const SUPERSEDED = '.superseded';

/**
 * Moves a downloaded object (`tmp`) to its place `rel` in the mirror folder; an earlier copy of it (`previousEtag`)
 * is kept under .superseded/. Returns why not when the key cannot be a file there because of another key (S3 keys
 * are names, not paths, so `a/x.jsonl.gz` and `a/x.jsonl.gz/y` can both exist, while a folder cannot hold a file
 * and a folder of one name) or a path too long for the file system. Such a key is skipped (the caller says so) rather than failing the round, which would
 * hold back every object after it, round after round. Any other error (disk full, permissions) is thrown.
 */
export function placeMirrored(
  root: string,
  rel: string,
  tmp: string,
  previousEtag: string | undefined,
): string | undefined {
  const final = join(root, rel);
  try {
    mkdirSync(dirname(final), { recursive: true });
    if (previousEtag !== undefined && existsSync(final)) {
      const keep = join(supersededFolder(root), `${rel}.${previousEtag.replace(/[^0-9a-zA-Z-]/g, '')}`);
      mkdirSync(dirname(keep), { recursive: true });
      // a copy kept already is never replaced: a round that stopped before its state was saved placed the new
      // bytes, and its rerun finds those in place (still under the old ETag); they are kept beside it, not lost
      renameSync(final, existsSync(keep) ? `${keep}.${Date.now()}` : keep);
    }
    renameSync(tmp, final);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'ENAMETOOLONG')
      throw e;
    rmSync(tmp, { force: true });
    if (code === 'ENAMETOOLONG')
      return `its path, or that of its kept copy under ${SUPERSEDED}/, is too long for the file system (${code})`;
    return `another key of the bucket holds its path as a ${code === 'EISDIR' || code === 'ENOTEMPTY' ? 'folder' : 'file'} (${code}): a folder cannot hold a file and a folder of one name`;
  }
}

/** The folder of the copies kept of replaced objects (hidden under the mirror folder: never ingested). */
export function supersededFolder(root: string): string {
  return join(root, SUPERSEDED);
}

/** The copies kept of `rel` as it was replaced, each as its path under supersededFolder(root) (`<rel>.<etag>`). */
export async function supersededCopies(root: string, rel: string): Promise<string[]> {
  const [folder, name] = [posix.dirname(rel), posix.basename(rel)];
  const names = await readdir(join(supersededFolder(root), folder)).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith(`${name}.`)).map((n) => `${folder}/${n}`);
}
