export { Store, type SortedPassOptions } from './store.ts';
export type { PassRecord, SortedPassBuilder } from './sorted-pass/index.ts';
export type { PreparedFile, FileStatus, ApplyStatus } from './apply/index.ts';
export type { HoldingView, LiveHolding } from './holdings/index.ts';
export type { SpaceUsage } from './environment/index.ts';
export { backupRefused, writeBackupFolder } from './environment/index.ts';
export { storeFileIn, type PageFigures } from './environment/index.ts';
export type {
  FileEntry,
  FileCounts,
  ConflictEntry,
  FileOutcome,
  FileIdentity,
  FileDecision,
} from './environment/index.ts';
export { MAX_REPORTED_LINES, UNREAD_HASH, decideFile, seenBefore, conflictFault } from './environment/index.ts';
export type { HoldingEvent, EventKind, HoldingState } from './holdings/index.ts';
export {
  doiKeysOf,
  holdingChanges,
  storedChanges,
  type AppliedFile,
  type AppliedListener,
  type HoldingChange,
} from './apply/index.ts';
export { SCHEMA_VERSION } from './environment/index.ts';
export { doiKeysOfRecords, encodeRecords, type EncodedRecords } from './holdings/index.ts';
export type { OvertakenRecords } from './apply/index.ts';
export { FeedImport } from './updates/index.ts';
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
} from './updates/index.ts';
export {
  readUpdatesTable,
  UpdatesIndex,
  workerTableBuilder,
  type BuiltTable,
  type TableBuilder,
} from './updates/index.ts';
export { UpdatesTable, type UpdatesTableParts } from './updates/index.ts';
export { JsonBytes, StoredHolding } from './holdings/index.ts';
export { sameBytes } from './holdings/index.ts';
export {
  classifyStoreError,
  storeWriteFault,
  StoreWriteError,
  LOW_SPACE_BYTES,
  type StoreWriteCode,
} from './environment/index.ts';
export { decodeCursor, encodeCursor, type FeedCursor } from './updates/index.ts';
export { keyHash, type FeedHead } from './updates/index.ts';
export type { ChangesPage, CursorRefusal } from './updates/index.ts';
export type { ChangeFeedView } from './updates/index.ts';
export { PrefixIndex, prefixLengthFor, type PrefixList } from './updates/index.ts';
export type { WarmRead } from './read-models/index.ts';
