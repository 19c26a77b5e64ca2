import type { StoreDbs } from '../environment/index.ts';
import type { ConflictEntry, FileEntry, FileIdentity } from '../ledger/index.ts';

/** Same-key conflicts (ledger.ts, decideFile's `conflict`): kept for the operator, once per content. Ids are `key NUL hash`. */

/** Records a conflict in the caller's write transaction; the one recorded before for the same content, if any. */
export function recordConflict(dbs: StoreDbs, f: FileIdentity, existing: FileEntry, now: () => Date): ConflictEntry {
  const id = `${f.key}\u0000${f.hash}`;
  const seen = dbs.conflicts.get(id);
  if (seen) return seen;
  const conflict: ConflictEntry = {
    key: f.key,
    size: f.size,
    hash: f.hash,
    lastModified: f.lastModified,
    appliedHash: existing.hash,
    recordedAt: now().toISOString(),
  };
  dbs.conflicts.putSync(id, conflict);
  dbs.reportsDue.putSync(f.key, true); // the file's report lists its conflicts: the bucket's copy is out of date
  return conflict;
}

/** The conflicts recorded for one key (lmdb-js reads a NUL as an array separator, so the range starts at the key). */
export function conflictsOf(dbs: StoreDbs, key: string): ConflictEntry[] {
  return [...dbs.conflicts.getRange({ start: key, end: `${key}\u0001` }).map((e) => e.value)];
}
