import { type Fault, type FileFaultCode, fault } from '../../base/index.ts';
import type { ParsedDeposit, RejectedLine } from '../../deposit/index.ts';

/**
 * The file ledger (docs/design.md, "The ledger: one decision per file"): what is kept per deposit file, and the
 * one rule that decides what becomes of a file given what the ledger already holds for its key. Pure: the store
 * calls it inside its transactions, the ingestor before it spends one.
 */

export interface FileCounts {
  /** non-blank lines */
  records: number;
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  noopRemovals: number;
  /** valid lines overridden by a later line for the same DOI in the same file */
  superseded: number;
  /**
   * valid records not applied because the file came late: a file after it in apply order, applied first, had
   * already decided their DOI (late-files.ts). Present only when there were some.
   */
  overtaken?: number;
  rejected: number;
}

export type FileOutcome = 'applied' | 'quarantined';

/** What identifies a file: its key and its content (size and hash), with the bucket LastModified. */
export interface FileIdentity {
  key: string;
  size: number;
  /** sha256 of the raw (compressed) bytes, hex; UNREAD_HASH when the file could not be read */
  hash: string;
  /** bucket LastModified (ms since epoch), the file's mtime in the mirror */
  lastModified: number;
}

export interface FileEntry extends FileIdentity {
  platform?: string;
  outcome: FileOutcome;
  /** apply sequence number within this environment (applied files only) */
  seq?: number;
  /** quarantined files: why (the message names the file) */
  code?: FileFaultCode;
  message?: string;
  counts?: FileCounts;
  /** at most MAX_REPORTED_LINES of them; `rejectedNotListed` counts the rest */
  rejectedLines?: RejectedLine[];
  rejectedNotListed?: number;
  timings?: { readMs: number; parseMs: number; applyMs: number };
  tries?: number;
  /** `--ingest`: the folder the file was read from (a late file reads it back from there: read-later-files.ts) */
  readFrom?: string;
  /** wall clock of the daemon that wrote the entry: operational only, never part of history or dumps */
  recordedAt: string;
}

export const MAX_REPORTED_LINES = 1000;

/** A same-key-other-content deposit: never applied, kept for the operator. */
export interface ConflictEntry {
  key: string;
  size: number;
  hash: string;
  lastModified: number;
  appliedHash: string;
  recordedAt: string;
}

/** The hash of a file that could not be read: its content is unknown, so it matches nothing and conflicts with nothing. */
export const UNREAD_HASH = '';

/**
 * What becomes of a file:
 * - `duplicate`: this content was decided before (applied, or quarantined and not retried): nothing to do;
 * - `conflict`: the key was applied with other content: never applied, recorded for the operator (names must
 *   be unique);
 * - `apply` / `quarantine`: nothing of the key is applied yet (no entry, a quarantine with other content, or
 *   the operator's --retry): the file is applied, or quarantined when it has a file-level fault (a file that
 *   cannot be read is one: its quarantine is written afresh each time);
 * - `unreadable`: the file cannot be read but its key was applied: the applied entry stays as it is.
 */
export type FileDecision = 'duplicate' | 'conflict' | 'apply' | 'quarantine' | 'unreadable';

export function decideFile(
  existing: FileEntry | undefined,
  incoming: Pick<FileIdentity, 'hash' | 'size' | 'lastModified'> & { faulty: boolean },
  retry: boolean,
): FileDecision {
  if (incoming.hash === UNREAD_HASH) {
    if (existing?.outcome === 'applied') return 'unreadable';
    // content unknown: only the same unread file (same size and LastModified) is the one decided before
    return !retry && existing?.hash === UNREAD_HASH && sameStat(existing, incoming) ? 'duplicate' : 'quarantine';
  }
  if (existing?.outcome === 'applied') return existing.hash === incoming.hash ? 'duplicate' : 'conflict';
  if (existing !== undefined && existing.hash === incoming.hash && !retry) return 'duplicate';
  return incoming.faulty ? 'quarantine' : 'apply';
}

/**
 * The shortcut of decideFile before a file is read: the same size and LastModified as its ledger entry is taken
 * to be the same content (a re-uploaded object gets a new LastModified), so the answer is `duplicate` without
 * reading or hashing the file. Answers only that; false means "read the file and decide".
 */
export function seenBefore(
  existing: FileEntry | undefined,
  stat: { size: number; lastModified: number },
  retry: boolean,
): boolean {
  return !retry && existing !== undefined && sameStat(existing, stat);
}

/**
 * A version of a file (its size and LastModified) that was decided: its ledger entry (seenBefore's shortcut), or
 * one of the key's recorded conflicts. A folder rescan hands on only versions that were not.
 */
export function decidedVersion(
  existing: FileEntry | undefined,
  conflicts: Iterable<ConflictEntry>,
  stat: { size: number; lastModified: number },
): boolean {
  if (seenBefore(existing, stat, false)) return true;
  for (const c of conflicts) if (sameStat(c, stat)) return true;
  return false;
}

function sameStat(a: { size: number; lastModified: number }, b: { size: number; lastModified: number }): boolean {
  return a.size === b.size && a.lastModified === b.lastModified;
}

/** The one way a quarantine entry is made. The fault's message names the file (every file fault's does). */
export function quarantineEntry(
  file: FileIdentity & { platform?: string },
  f: Fault<FileFaultCode>,
  tries: number,
  recordedAt: string,
): FileEntry {
  const entry: FileEntry = {
    key: file.key,
    size: file.size,
    hash: file.hash,
    lastModified: file.lastModified,
    outcome: 'quarantined',
    code: f.code,
    message: f.message,
    tries,
    recordedAt,
  };
  if (file.platform !== undefined) entry.platform = file.platform;
  return entry;
}

/** The counts of a file about to be applied: what parsing found, the store's outcomes still zero. */
export function emptyCounts(parsed: ParsedDeposit): FileCounts {
  return {
    records: parsed.recordLines,
    added: 0,
    updated: 0,
    removed: 0,
    unchanged: 0,
    noopRemovals: 0,
    superseded: parsed.superseded,
    rejected: parsed.rejected.length,
  };
}

/** The entry of an applied file, its report with at most MAX_REPORTED_LINES rejected lines listed. */
export function appliedEntry(
  f: FileIdentity & {
    platform: string;
    parsed: ParsedDeposit;
    timings: { readMs: number; parseMs: number };
    tries: number;
    readFrom?: string;
  },
  seq: number,
  counts: FileCounts,
  applyMs: number,
  recordedAt: string,
): FileEntry {
  const { rejected } = f.parsed;
  return {
    key: f.key,
    platform: f.platform,
    size: f.size,
    hash: f.hash,
    lastModified: f.lastModified,
    outcome: 'applied',
    seq,
    counts,
    rejectedLines: rejected.slice(0, MAX_REPORTED_LINES),
    rejectedNotListed: Math.max(0, rejected.length - MAX_REPORTED_LINES),
    timings: { ...f.timings, applyMs },
    tries: f.tries,
    ...(f.readFrom !== undefined ? { readFrom: f.readFrom } : {}),
    recordedAt,
  };
}

/** What a same-key conflict means, in the words every report of it uses. */
export function conflictFault(c: ConflictEntry): Fault<'KEY_REUSED'> {
  return fault(
    'KEY_REUSED',
    `${c.key} was already applied with other content (sha256 ${c.appliedHash.slice(0, 12)}); this content (sha256 ${c.hash.slice(0, 12)}) is not applied: file names must be unique`,
  );
}
