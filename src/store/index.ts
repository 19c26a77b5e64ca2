export type { ApplyStatus, FileStatus, OvertakenRecords, PreparedFile } from './apply/index.ts';
export { ACCESS_COLUMNS, type AccessCounts, type AppliedFile, doiKeysOf, storedChanges } from './apply/index.ts';
export type { FileReport, PlatformFilesPage } from './environment/index.ts';
export {
  backupRefused,
  openLmdbFile,
  openTables,
  type StoreWriteCode,
  storeFileIn,
  storeWriteFault,
  type Table,
  type Tables,
  table,
  writeBackupFolder,
} from './environment/index.ts';
export type { HoldingChange, HoldingEvent, HoldingState, HoldingView, LiveHolding } from './holdings/index.ts';
export {
  changedParts,
  doiKeysOfRecords,
  type EncodedRecords,
  encodeRecords,
  StoredHolding,
} from './holdings/index.ts';
export type { ConflictEntry, FileEntry, FileIdentity } from './ledger/index.ts';
export { conflictFault, decideFile, seenBefore, UNREAD_HASH } from './ledger/index.ts';
export { readThenClose, type WarmRead } from './read-models/index.ts';
export type { SortedPassBuilder } from './sorted-pass/index.ts';
export { type SortedPassOptions, Store } from './store.ts';
export {
  decodeCursor,
  encodeCursor,
  type FeedCursor,
  FeedImport,
  keyHash,
  type ReplaceReport,
  recordKey,
  servedUpdates,
  type TableBuilder,
  type UpdatesEntry,
  UpdatesIndex,
  UpdatesTable,
  type WorkUpdates,
  workNotices,
} from './updates/index.ts';
