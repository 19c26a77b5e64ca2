import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The hidden folder of a bucket folder that keeps what --ingest applied from elsewhere (never ingested: a dot name). */
const INGESTED = '.ingested';

/**
 * Where --ingest reads a file from. A file inside the environment's bucket folder is read there. One from elsewhere
 * (an operator's download folder) is first copied, with its mtime, to the bucket folder's hidden
 * `.ingested/<sha256 of its bytes, 16 hex>/<key>`, and read from that copy: if a file that sorts before it comes
 * later (a late file), this one is read back from where it was applied (checked by its sha256), and a temporary
 * folder would be gone by then, leaving the late file unreadable (LATER_FILE_UNREADABLE) for good. One folder per
 * content: a quarantined file fixed and given again under its key gets a copy of its own. A copy that cannot be
 * made (`warn`): the file is read where it is.
 */
export function ingestRoot(abs: string, key: string, bucketPath: string, warn: (message: string) => void): string {
  const root = dirname(dirname(abs));
  if (resolve(root) === resolve(bucketPath) || !existsSync(abs)) return root; // a missing file is reported by the ingest
  try {
    const keptRoot = join(bucketPath, INGESTED, sha256OfFile(abs).slice(0, 16));
    const kept = join(keptRoot, key);
    if (existsSync(kept)) return keptRoot;
    mkdirSync(dirname(kept), { recursive: true });
    // whole or not at all: a temporary name (hidden), then the rename
    const tmp = join(dirname(kept), `.${process.pid}-${Date.now()}.partial`);
    try {
      copyFileSync(abs, tmp);
      const { atime, mtime } = statSync(abs);
      utimesSync(tmp, atime, mtime);
      renameSync(tmp, kept);
    } finally {
      rmSync(tmp, { force: true });
    }
    return keptRoot;
  } catch (e) {
    warn(
      `${key}: no copy could be kept in ${join(bucketPath, INGESTED)} (${(e as Error).message}); read from ${root}, which must stay while files of its platform may still come late`,
    );
    return root;
  }
}

/** The sha256 of a file, read a MiB at a time: an operator's file may be too large to be a deposit (TOO_LARGE). */
function sha256OfFile(path: string): string {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let n: number; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
