export {
  AppliedListeners,
  doiKeysOf,
  holdingChanges,
  storedChanges,
  type AppliedFile,
  type AppliedListener,
  type HoldingChange,
} from './applied-files.ts';
export { applyFilesRecords, nextValue, type FileInPass, type RecordCounts, type RecordView } from './apply-records.ts';
export { conflictsOf, recordConflict } from './conflicts.ts';
export type { ApplyStatus, FileStatus, OvertakenRecords, PreparedFile } from './file-status.ts';
export { KeyMerge, type KeyedCursor } from './key-merge.ts';
export { isLate, noteApplied, recordsInPlace } from './late-files.ts';
