import type { RejectedLine } from '../deposit/index.ts';

/** What the ledger keeps per file (DESIGN section 3): identity, outcome and report. */

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
  rejected: number;
}

export type FileOutcome = 'applied' | 'quarantined';

export interface FileEntry {
  key: string;
  platform?: string;
  size: number;
  /** sha256 of the raw (compressed) bytes, hex */
  hash: string;
  /** bucket LastModified (ms since epoch), the file's mtime in the mirror */
  lastModified: number;
  outcome: FileOutcome;
  /** apply sequence number within this environment (applied files only) */
  seq?: number;
  /** quarantined files: why */
  code?: string;
  message?: string;
  counts?: FileCounts;
  /** at most MAX_REPORTED_LINES of them; `rejectedNotListed` counts the rest */
  rejectedLines?: RejectedLine[];
  rejectedNotListed?: number;
  timings?: { readMs: number; parseMs: number; applyMs: number };
  tries?: number;
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
