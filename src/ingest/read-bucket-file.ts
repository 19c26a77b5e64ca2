import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** One bucket file as read from the local folder (or S3 mirror): bytes, identity and LastModified. */
export interface BucketFile {
  key: string;
  bytes: Uint8Array;
  size: number;
  /** bucket LastModified, kept as the file's mtime */
  lastModified: number;
  /** sha256 of the bytes, hex */
  hash: string;
}

export async function statBucketFile(root: string, key: string): Promise<{ size: number; lastModified: number }> {
  const s = await stat(join(root, key));
  return { size: s.size, lastModified: Math.floor(s.mtimeMs) };
}

export async function readBucketFile(root: string, key: string): Promise<BucketFile> {
  const path = join(root, key);
  const before = await stat(path);
  const bytes = await readFile(path);
  const after = await stat(path);
  if (after.size !== bytes.length || after.mtimeMs !== before.mtimeMs) {
    const e = new Error(`${key} changed while it was read (still being written?)`) as NodeJS.ErrnoException;
    e.code = 'EAGAIN';
    throw e;
  }
  return { key, bytes, size: bytes.length, lastModified: Math.floor(after.mtimeMs), hash: sha256(bytes) };
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
}
