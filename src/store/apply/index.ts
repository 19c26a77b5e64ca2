export {
  type AppliedFile,
  type AppliedListener,
  AppliedListeners,
  doiKeysOf,
  type HoldingChange,
  holdingChanges,
  storedChanges,
} from './applied-files.ts';
export { applyFilesRecords, type FileInPass, nextValue, type RecordCounts, type RecordView } from './apply-records.ts';
export { conflictsOf, recordConflict } from './conflicts.ts';
export type { ApplyStatus, FileStatus, OvertakenRecords, PreparedFile } from './file-status.ts';
export { type KeyedCursor, KeyMerge } from './key-merge.ts';
export { isLate, noteApplied, recordsInPlace } from './late-files.ts';
export {
  ACCESS_COLUMNS,
  type AccessCounts,
  accessDelta,
  addLiveCounts,
  type LiveMove,
  liveCounts,
  liveCountsByAccess,
  syncLiveByAccess,
} from './live-counts.ts';
