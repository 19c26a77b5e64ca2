import { type ConflictEntry, conflictFault, type FileEntry } from '../ledger/index.ts';
import { META, type StoreDbs } from './environment.ts';

/**
 * The ledger in each platform's order, newest first (the deposit reports: docs/interface.md, "Deposit reports"):
 * `filesByPlatform`, key [platform, lastModified, file key], written in the transaction that writes the ledger
 * entry, so a page of one platform's files is a range read whatever the size of the ledger.
 */

/**
 * The platform a ledger entry is listed under: its own, else its key's first folder (a quarantined path may lack
 * one), else '' (a file at the bucket's top: listed under no platform a key can name).
 */
export function platformOfEntry(entry: FileEntry): string {
  if (entry.platform !== undefined) return entry.platform;
  const slash = entry.key.indexOf('/');
  return slash > 0 ? entry.key.slice(0, slash) : '';
}

type IndexKey = [string, number, string];

function indexKey(entry: FileEntry): IndexKey {
  return [platformOfEntry(entry), entry.lastModified, entry.key];
}

/**
 * Writes a file's ledger entry and its place in its platform's order, in the caller's write transaction: the one
 * way the ledger is written. An entry that replaces one of another LastModified (a quarantined file deposited
 * again) moves its place. Every entry written is a new outcome, so its report is due (`reportsDue`) in the same
 * commit: a crash or a stop never loses a report the bucket has not got yet.
 */
export function putFileEntry(dbs: StoreDbs, entry: FileEntry): void {
  const before = dbs.files.get(entry.key);
  const now = indexKey(entry);
  if (before && before.lastModified !== entry.lastModified) dbs.filesByPlatform.removeSync(indexKey(before));
  dbs.filesByPlatform.putSync(now, true);
  dbs.files.putSync(entry.key, entry);
  dbs.reportsDue.putSync(entry.key, true);
}

/**
 * Every ledger entry has its one place in the index: the counts agree and each entry's place is there. When not (a
 * store made before the index, or written since by an older program after a rollback, which writes entries and
 * not their places: a file recorded again with a new LastModified keeps the counts equal), a writable open builds
 * it again, one pass over the ledger in one transaction (12,000 files: 0.25 to 0.95 s, bench/deposit-reports.ts).
 * The check reads every entry (12,000: about as long as a scan, 150-400 ms), so it is skipped when the store's
 * last commit is the mark this program leaves (`markPlatformFiles`, at a writable open and close): then no
 * program wrote since. Any commit after it (an older program's, a crash before the close's mark) means a check.
 */
export function syncPlatformFiles(dbs: StoreDbs): void {
  if (dbs.meta.get(META.platformIndexAt) !== lastTxnId(dbs) && !platformFilesMatch(dbs))
    dbs.root.transactionSync(() => {
      dbs.filesByPlatform.clearSync();
      for (const { value } of dbs.files.getRange()) dbs.filesByPlatform.putSync(indexKey(value), true);
    });
  markPlatformFiles(dbs);
}

/** Marks the index as matching the ledger as of this commit: a newer program's every write keeps it so. */
export function markPlatformFiles(dbs: StoreDbs): void {
  // inside a write transaction the last committed one is the one before it
  dbs.root.transactionSync(() => dbs.meta.putSync(META.platformIndexAt, lastTxnId(dbs) + 1));
}

function lastTxnId(dbs: StoreDbs): number {
  return (dbs.root.getStats() as { lastTxnId: number }).lastTxnId;
}

function platformFilesMatch(dbs: StoreDbs): boolean {
  if (entryCount(dbs.files) !== entryCount(dbs.filesByPlatform)) return false;
  for (const { value } of dbs.files.getRange()) if (!dbs.filesByPlatform.doesExist(indexKey(value))) return false;
  return true;
}

function entryCount(db: { getStats(): unknown }): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/** A page of a platform's files, newest first; `after` the last file key of the page before. */
export interface PlatformFilesPage {
  entries: FileEntry[];
  /** the key to ask `after` for the next page; none when this page is the last */
  next?: string;
}

/**
 * One platform's ledger entries, newest first (LastModified, then key, descending), `limit` of them from after the
 * file `after`. Undefined when `after` is not a file of this platform: a cursor that points nowhere.
 */
export function platformFilesPage(
  dbs: StoreDbs,
  platform: string,
  limit: number,
  after?: string,
): PlatformFilesPage | undefined {
  let start: IndexKey | [string, number] = [platform, Number.MAX_SAFE_INTEGER];
  if (after !== undefined) {
    const from = dbs.files.get(after);
    if (!from || platformOfEntry(from) !== platform) return undefined;
    start = [platform, from.lastModified, from.key];
  }
  const entries: FileEntry[] = [];
  let more = false;
  // a read-only open of a store older than the index has no such table: nothing to list, not a crash
  if (dbs.filesByPlatform === undefined) return { entries };
  for (const key of dbs.filesByPlatform.getKeys({ start, end: [platform], reverse: true })) {
    const [p, , file] = key as IndexKey;
    if (p !== platform) break;
    if (after !== undefined && file === after) continue; // the range's start is the cursor itself
    if (entries.length === limit) {
      more = true;
      break;
    }
    const entry = dbs.files.get(file);
    if (entry) entries.push(entry);
  }
  const last = entries.at(-1);
  return more && last ? { entries, next: last.key } : { entries };
}

/** A file's report: what the ledger keeps of it and its same-key conflicts, as --report and the report API give it. */
export interface FileReport {
  env: string;
  key: string;
  platform?: string;
  outcome: FileEntry['outcome'];
  lastModified: string;
  recordedAt: string;
  rejectedLines: FileEntry['rejectedLines'];
  rejectedNotListed?: number;
  conflicts?: (ReturnType<typeof conflictFault> & { lastModified: string; recordedAt: string })[];
  [field: string]: unknown;
}

/**
 * The one report of a file (`--report`, the report API's JSON and HTML, the copy written back to the bucket): the
 * ledger entry with its times as ISO text and its conflicts in words. The folder the CLI read the file from is the
 * operator's, and left out.
 */
export function fileReport(entry: FileEntry, env: string, conflicts: readonly ConflictEntry[]): FileReport {
  const { lastModified, rejectedNotListed, readFrom: _, ...rest } = entry;
  const report: FileReport = { env, ...rest, rejectedLines: rest.rejectedLines ?? [], lastModified: iso(lastModified) };
  if (rejectedNotListed) report.rejectedNotListed = rejectedNotListed;
  if (conflicts.length > 0)
    report.conflicts = conflicts.map((c) => ({
      ...conflictFault(c),
      lastModified: iso(c.lastModified),
      recordedAt: c.recordedAt,
    }));
  return report;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
