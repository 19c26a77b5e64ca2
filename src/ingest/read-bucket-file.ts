import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fault, type Fault } from '../fault.ts';

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
  if (after.size !== bytes.length || after.mtimeMs !== before.mtimeMs) throw changedWhileRead(key);
  return { key, bytes, size: bytes.length, lastModified: Math.floor(after.mtimeMs), hash: sha256(bytes) };
}

/**
 * The identity of a file that is refused without being parsed (its path breaks the rules): hashed as a stream,
 * so a huge file costs no memory.
 */
export async function hashBucketFile(root: string, key: string): Promise<Omit<BucketFile, 'bytes'>> {
  const path = join(root, key);
  const before = await stat(path);
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream() as unknown as AsyncIterable<Uint8Array>) hasher.update(chunk);
  const after = await stat(path);
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw changedWhileRead(key);
  return { key, size: after.size, lastModified: Math.floor(after.mtimeMs), hash: hasher.digest('hex') };
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
}

/** Why a file could not be read, as the one fault each case gives (`FILE_MISSING` for a file that is not there). */
export function readFault(key: string, e: unknown): Fault<'FILE_MISSING' | 'READ_FAILED'> {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ENOENT') return fault('FILE_MISSING', `${key}: no such file in the bucket folder`);
  return fault('READ_FAILED', `${key}: cannot read: ${err.message}`);
}

function changedWhileRead(key: string): NodeJS.ErrnoException {
  const e = new Error(`${key} changed while it was read (still being written?)`) as NodeJS.ErrnoException;
  e.code = 'EAGAIN';
  return e;
}
