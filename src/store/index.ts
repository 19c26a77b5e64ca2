export type { ApplyStatus, FileStatus, OvertakenRecords, PreparedFile } from './apply/index.ts';
export {
  type AppliedFile,
  type AppliedListener,
  doiKeysOf,
  type HoldingChange,
  holdingChanges,
  storedChanges,
} from './apply/index.ts';
export type {
  ConflictEntry,
  FileCounts,
  FileDecision,
  FileEntry,
  FileIdentity,
  FileOutcome,
  SpaceUsage,
} from './environment/index.ts';
export {
  backupRefused,
  classifyStoreError,
  conflictFault,
  decideFile,
  LOW_SPACE_BYTES,
  MAX_REPORTED_LINES,
  type PageFigures,
  SCHEMA_VERSION,
  type StoreWriteCode,
  StoreWriteError,
  seenBefore,
  storeFileIn,
  storeWriteFault,
  UNREAD_HASH,
  writeBackupFolder,
} from './environment/index.ts';
export type { EventKind, HoldingEvent, HoldingState, HoldingView, LiveHolding } from './holdings/index.ts';
export {
  doiKeysOfRecords,
  type EncodedRecords,
  encodeRecords,
  JsonBytes,
  StoredHolding,
  sameBytes,
} from './holdings/index.ts';
export type { WarmRead } from './read-models/index.ts';
export type { PassRecord, SortedPassBuilder } from './sorted-pass/index.ts';
export { type SortedPassOptions, Store } from './store.ts';
export type { ChangeFeedView, ChangesPage, CursorRefusal } from './updates/index.ts';
export {
  type BuiltTable,
  decodeCursor,
  encodeCursor,
  type FeedCursor,
  type FeedHead,
  FeedImport,
  keyHash,
  PrefixIndex,
  type PrefixList,
  prefixLengthFor,
  type ReclassifiedNotice,
  type ReplaceMode,
  type ReplaceReport,
  readUpdatesTable,
  recordKey,
  type StoredUpdate,
  servedUpdates,
  type TableBuilder,
  type UpdateEvent,
  type UpdatesEntry,
  UpdatesIndex,
  UpdatesTable,
  type UpdatesTableParts,
  type WorkUpdates,
  workerTableBuilder,
  workNotices,
} from './updates/index.ts';
