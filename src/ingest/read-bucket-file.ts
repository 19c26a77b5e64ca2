import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Fault, fault } from '../base/index.ts';
import { statOf } from '../bucket/file-stat.ts';
import { UNREAD_HASH } from '../store/ledger/index.ts';

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

/**
 * A key that is a symbolic link, a FIFO, a socket or a device: its quarantine, never read. A link is not followed
 * (it may point outside the bucket), and a FIFO would block the read for ever. A folder is left to the read
 * (READ_FAILED), as any file that cannot be read.
 */
export async function notRegularFile(
  root: string,
  key: string,
): Promise<{ file: Omit<BucketFile, 'bytes'>; fault: Fault<'NOT_REGULAR_FILE'> } | undefined> {
  const path = join(root, key);
  const s = await lstat(path);
  if (s.isFile() || s.isDirectory()) return undefined;
  const what = s.isSymbolicLink()
    ? `a symbolic link (to ${await readlink(path)})`
    : s.isFIFO()
      ? 'a FIFO'
      : s.isSocket()
        ? 'a socket'
        : 'a device';
  return {
    file: { key, ...statOf(s), hash: UNREAD_HASH },
    fault: fault(
      'NOT_REGULAR_FILE',
      `${key}: ${what}, not a regular file; links in a bucket folder are not followed and only regular files are read`,
    ),
  };
}

/**
 * The file's bytes, never more than `mostBytes` of them: a file that grew past the size rule after it was checked
 * (rawSizeFault) is read again later, when the check refuses it, rather than taken into memory whole.
 */
export async function readBucketFile(root: string, key: string, mostBytes: number): Promise<BucketFile> {
  const path = join(root, key);
  // O_NOFOLLOW: a regular file swapped for a link after the check is not followed (ELOOP: read again later)
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let before: Stats;
  let bytes: Uint8Array;
  try {
    before = await handle.stat();
    if (!before.isFile() && !before.isDirectory()) throw changedWhileRead(key); // swapped after the check
    if (before.isFile() && before.size > mostBytes) throw changedWhileRead(key);
    bytes = await readSize(handle, before.size, key); // a folder: EISDIR
  } finally {
    await handle.close();
  }
  const after = await lstat(path);
  if (after.size !== bytes.length || after.mtimeMs !== before.mtimeMs) throw changedWhileRead(key);
  return { key, bytes, ...statOf(after), hash: sha256(bytes) };
}

/**
 * The identity of a file that is refused without being parsed (its path breaks the rules): hashed as a stream,
 * so a huge file costs no memory.
 */
export async function hashBucketFile(root: string, key: string): Promise<Omit<BucketFile, 'bytes'>> {
  const path = join(root, key);
  const before = await lstat(path);
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream() as unknown as AsyncIterable<Uint8Array>) hasher.update(chunk);
  const after = await lstat(path);
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw changedWhileRead(key);
  return { key, ...statOf(after), hash: hasher.digest('hex') };
}

/** Exactly `size` bytes, the file's whole content: a byte more (it grew while read) is a change. */
async function readSize(handle: FileHandle, size: number, key: string): Promise<Uint8Array> {
  const bytes = new Uint8Array(size + 1);
  let got = 0;
  for (;;) {
    const { bytesRead } = await handle.read(bytes, got, bytes.length - got, got);
    if (bytesRead === 0) break;
    got += bytesRead;
    if (got > size) throw changedWhileRead(key);
  }
  return bytes.subarray(0, got);
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
