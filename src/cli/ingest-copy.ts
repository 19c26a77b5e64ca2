import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The hidden folder of a bucket folder that keeps what --ingest applied from elsewhere (never ingested: a dot name). */
export const INGESTED = '.ingested';

/**
 * Where --ingest reads a file from. A file inside the environment's bucket folder is read there. One from elsewhere
 * (an operator's download folder) is first copied, with its mtime, to the bucket folder's hidden `.ingested/` under
 * its key, and read from that copy: if a file that sorts before it comes later (a late file), this one is read back
 * from where it was applied (checked by its sha256), and a temporary folder would be gone by then, leaving the late
 * file unreadable (LATER_FILE_UNREADABLE) for good. A copy already kept with other bytes is left alone (its bytes
 * are what the ledger applied) and the file is read where it is; so is one the copy cannot be made for (`warn`).
 */
export function ingestRoot(abs: string, key: string, bucketPath: string, warn: (message: string) => void): string {
  const root = dirname(dirname(abs));
  if (resolve(root) === resolve(bucketPath) || !existsSync(abs)) return root; // a missing file is reported by the ingest
  const keptRoot = join(bucketPath, INGESTED);
  const kept = join(keptRoot, key);
  try {
    if (existsSync(kept)) return readFileSync(kept).equals(readFileSync(abs)) ? keptRoot : root;
    mkdirSync(dirname(kept), { recursive: true });
    copyFileSync(abs, kept);
    const { atime, mtime } = statSync(abs);
    utimesSync(kept, atime, mtime);
    return keptRoot;
  } catch (e) {
    warn(`${key}: no copy could be kept in ${keptRoot} (${(e as Error).message}); read from ${root}, which must stay while files of its platform may still come late`);
    return root;
  }
}
