/**
 * The file ledger's records and its one decision per file. Pure, with no LMDB in its imports: the ingest's parse
 * worker takes UNREAD_HASH from here, and a worker that loads lmdb-js's native module can bring the process down
 * when it is ended during that load (a stop right after a start).
 */
export {
  appliedEntry,
  type ConflictEntry,
  conflictFault,
  decidedVersion,
  decideFile,
  emptyCounts,
  type FileCounts,
  type FileDecision,
  type FileEntry,
  type FileIdentity,
  type FileOutcome,
  MAX_REPORTED_LINES,
  quarantineEntry,
  seenBefore,
  UNREAD_HASH,
} from './ledger.ts';
