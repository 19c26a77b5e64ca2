import { ByteWriter } from '../../bytes/index.ts';
import { applyOrder } from '../../deposit/index.ts';
import { META, type StoreDbs } from '../environment/index.ts';
import { type EncodedRecords, encodeRecords, RecordCursor, splitHoldingKey } from '../holdings/index.ts';
import type { FileEntry } from '../ledger/index.ts';
import type { OvertakenRecords, PreparedFile } from './file-status.ts';

/**
 * Late files (docs/design.md, "Apply order and replica convergence"). Files apply in (LastModified, key) order,
 * but one can come after files that follow it: an operator's --retry of an old quarantine, an S3 object listed
 * late, a local file copied in with an old mtime. Applied as it is, its records would overwrite what the later
 * files decided. So a late file's record for a DOI that a later file (applied first) also carried is skipped:
 * each holding ends as the last file in apply order left it, whatever order the files came in, and replicas
 * agree. "Carried", not "changed": a later record equal to the state it met wrote nothing, yet it is the later
 * word, so the later files themselves are read back (the ingestor's part); the store only names them and checks,
 * inside its transaction, that every one of them was read.
 */

/** Where a file sits in the apply order. */
interface OrderedFile {
  platform: string;
  key: string;
  lastModified: number;
}

/**
 * A file's records as they apply in its place, in its transaction: all of them, or those the later files left
 * to it (and how many they took); or `late`, the later files still to read.
 */
export function recordsInPlace(
  dbs: StoreDbs,
  f: PreparedFile,
): { late: FileEntry[] } | { records: EncodedRecords; overtaken: number } {
  const newest = newestApplied(dbs, f.platform);
  const later = f.inOrderGiven ? [] : laterApplied(dbs, f, newest);
  if (!checkedAgainst(later, f.overtaken)) return { late: later };
  noteApplied(dbs, f, newest);
  const all = f.encoded ?? encodeRecords(f.parsed.records, f.platform);
  if (later.length === 0) return { records: all, overtaken: 0 };
  const { records, left } = withoutDoiKeys(all, f.overtaken!.doiKeys);
  return { records, overtaken: left };
}

/** Files applied after `f` in apply order came first: applied now, it would be late (a sorted pass leaves it out). */
export function isLate(dbs: StoreDbs, f: OrderedFile & { inOrderGiven?: boolean }): boolean {
  return !f.inOrderGiven && laterApplied(dbs, f, newestApplied(dbs, f.platform)).length > 0;
}

/** `f` is applied (in the caller's transaction): the platform's newest applied file moves when `f` comes after it. */
export function noteApplied(dbs: StoreDbs, f: OrderedFile, newest = newestApplied(dbs, f.platform)): void {
  if (!newest || applyOrder(f, newest) > 0)
    dbs.meta.putSync(META.newestApplied(f.platform), { key: f.key, lastModified: f.lastModified });
}

/** The applied files of `f`'s platform that come after it in apply order; none for a file after `newest`. */
function laterApplied(dbs: StoreDbs, f: OrderedFile, newest: OrderedFile | undefined): FileEntry[] {
  if (!newest || applyOrder(f, newest) >= 0) return [];
  const later: FileEntry[] = [];
  for (const e of platformEntries(dbs, f.platform)) if (e.outcome === 'applied' && applyOrder(e, f) > 0) later.push(e);
  return later.sort(applyOrder);
}

/** The late file's check is whole when every later file was read: otherwise a file applied since must be read too. */
function checkedAgainst(later: readonly FileEntry[], overtaken: OvertakenRecords | undefined): boolean {
  return later.every((e) => overtaken?.checkedSeqs.has(e.seq!) === true);
}

/** The records without those of the given DOI keys, and how many were left out. */
function withoutDoiKeys(
  records: EncodedRecords,
  doiKeys: ReadonlySet<string>,
): { records: EncodedRecords; left: number } {
  if (doiKeys.size === 0) return { records, left: 0 };
  const out = new ByteWriter(records.bytes.length);
  const rec = new RecordCursor(records.bytes);
  let [at, count, left] = [0, 0, 0];
  while (rec.next()) {
    const end = rec.stateStart + rec.stateLen;
    if (doiKeys.has(splitHoldingKey(rec.key).doiKey)) left++;
    else {
      out.bytes(records.bytes.subarray(at, end));
      count++;
    }
    at = end;
  }
  return { records: { bytes: out.buf.slice(0, out.pos), count }, left };
}

/**
 * The platform's applied file that comes last in apply order (META; a store written before it was kept finds it by
 * one scan of the platform's ledger entries, kept from its next file in place).
 */
function newestApplied(dbs: StoreDbs, platform: string): OrderedFile | undefined {
  const kept = dbs.meta.get(META.newestApplied(platform)) as { key: string; lastModified: number } | undefined;
  if (kept) return { platform, ...kept };
  let newest: FileEntry | undefined;
  for (const e of platformEntries(dbs, platform))
    if (e.outcome === 'applied' && (!newest || applyOrder(e, newest) > 0)) newest = e;
  return newest && { platform, key: newest.key, lastModified: newest.lastModified };
}

/** The ledger entries of one platform's keys (`<platform>/<name>`: one range, '0' follows '/'). */
function* platformEntries(dbs: StoreDbs, platform: string): Generator<FileEntry> {
  for (const { value } of dbs.files.getRange({ start: `${platform}/`, end: `${platform}0` }))
    if (value.platform === undefined || value.platform === platform) yield value;
}
