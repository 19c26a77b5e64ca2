import { lstatSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

/** What identifies a version of a bucket file before it is read: its size and LastModified (ms). */
export interface FileStat {
  size: number;
  lastModified: number;
}

/** The entry itself, not what a symbolic link points to: links in a bucket folder are never followed. */
export async function statBucketFile(root: string, key: string): Promise<FileStat> {
  return statOf(await lstat(join(root, key)));
}

/** A bucket file's LastModified is its mtime in whole milliseconds (an S3 mirror sets it from the object's). */
export function statOf(s: { size: number; mtimeMs: number }): FileStat {
  return { size: s.size, lastModified: Math.floor(s.mtimeMs) };
}

/** The same, at once: a rescan stats thousands of files, and an async stat costs ten times the CPU of one in place. */
export function statBucketFileSync(root: string, key: string): FileStat {
  return statOf(lstatSync(join(root, key)));
}
