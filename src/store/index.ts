export { Store, type SortedPassOptions } from './store.ts';
export type { PassRecord, SortedPassBuilder } from './sorted-pass/index.ts';
export type { PreparedFile, FileStatus, ApplyStatus, HoldingView, LiveHolding, SpaceUsage } from './store-types.ts';
export { backupRefused, writeBackupFolder } from './backup-folder.ts';
export { storeFileIn, type PageFigures } from './store-file.ts';
export type { FileEntry, FileCounts, ConflictEntry, FileOutcome, FileIdentity, FileDecision } from './ledger.ts';
export { MAX_REPORTED_LINES, UNREAD_HASH, decideFile, seenBefore, conflictFault } from './ledger.ts';
export type { HoldingEvent, EventKind, HoldingState } from './holding-codec.ts';
export { doiKeysOf, holdingChanges, storedChanges, type AppliedFile, type AppliedListener, type HoldingChange } from './applied-files.ts';
export { SCHEMA_VERSION } from './environment.ts';
export { doiKeysOfRecords, encodeRecords, type EncodedRecords } from './encoded-records.ts';
export type { OvertakenRecords } from './late-files.ts';
export { FeedImport } from './feed-import.ts';
export {
  servedUpdates,
  workNotices,
  recordKey,
  type ReclassifiedNotice,
  type StoredUpdate,
  type UpdateEvent,
  type UpdatesEntry,
  type WorkUpdates,
  type ReplaceReport,
  type ReplaceMode,
} from './work-updates.ts';
export { readUpdatesTable, UpdatesIndex, workerTableBuilder, type BuiltTable, type TableBuilder } from './updates-index.ts';
export { UpdatesTable, type UpdatesTableParts } from './updates-table.ts';
export { JsonBytes, StoredHolding } from './holding-json.ts';
export { sameBytes } from './bytes.ts';
export { classifyStoreError, storeWriteFault, StoreWriteError, LOW_SPACE_BYTES, type StoreWriteCode } from './write-failure.ts';
export { decodeCursor, encodeCursor, type FeedCursor } from './change-cursor.ts';
export { keyHash, type FeedHead } from './change-feed.ts';
export type { ChangesPage, CursorRefusal } from './change-page.ts';
export type { ChangeFeedView } from './change-feed-view.ts';
export { PrefixIndex, prefixLengthFor, type PrefixList } from './prefix-index.ts';
export type { WarmRead } from './reloading.ts';
