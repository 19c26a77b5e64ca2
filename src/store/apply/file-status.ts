import type { Fault, FileFaultCode } from '../../base/index.ts';
import type { ParsedDeposit } from '../../deposit/index.ts';
import type { EncodedRecords } from '../holdings/index.ts';
import type { ConflictEntry, FileEntry, FileIdentity } from '../ledger/index.ts';

/** What the store takes to apply, and what it did with each file (store.ts). */

/** A file read and parsed, ready to be applied with its ledger entry in one transaction. */
export interface PreparedFile extends FileIdentity {
  platform: string;
  /** the parse report; its `records` may be left empty when `encoded` carries them (the ingest worker) */
  parsed: ParsedDeposit;
  /** the valid records encoded for the store; built from `parsed.records` when absent */
  encoded?: EncodedRecords;
  timings: { readMs: number; parseMs: number };
  tries: number;
  /** set by an operator's --retry: a quarantined entry for this key may be replaced */
  retry?: boolean;
  /** `--ingest`: applied as the newest, in the operator's order, whatever its LastModified (never late) */
  inOrderGiven?: boolean;
  /** the folder it was read from when that may not be the bucket folder (`--ingest`): kept in the ledger entry */
  readFrom?: string;
  /** a late file: the later applied files it was checked against, and its records they decided (late-files.ts) */
  overtaken?: OvertakenRecords;
}

/** What the store did with a file: the decideFile outcome, carried out. */
export type FileStatus =
  | { status: 'applied'; entry: FileEntry }
  | { status: 'quarantined'; entry: FileEntry }
  /** this content was decided before: nothing done */
  | { status: 'duplicate'; entry: FileEntry }
  /** same key, other content: recorded as a conflict, nothing applied */
  | { status: 'conflict'; conflict: ConflictEntry; entry: FileEntry }
  /** could not be read, and its key was applied: the applied entry is kept as it is */
  | { status: 'unreadable'; entry: FileEntry; fault: Fault<FileFaultCode> };

/**
 * What applyFiles gives per file: a FileStatus, or `late`: nothing written, since files after it in apply order
 * were applied and not all of them were checked (late-files.ts). The caller reads `later` back, sets the file's
 * `overtaken` and applies it again.
 */
export type ApplyStatus = FileStatus | { status: 'late'; file: PreparedFile; later: FileEntry[] };

/** The later files a late file was checked against (their apply numbers) and the DOI keys of its records they carry. */
export interface OvertakenRecords {
  checkedSeqs: ReadonlySet<number>;
  doiKeys: ReadonlySet<string>;
}
