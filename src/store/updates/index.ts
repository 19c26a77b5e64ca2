export { decodeCursor, encodeCursor, type FeedCursor } from './change-cursor.ts';
export { ChangeFeedView } from './change-feed-view.ts';
export { DEFAULT_KEEP_MS, keyHash, startChangeFeed, type FeedHead } from './change-feed.ts';
export type { ChangesPage, CursorRefusal } from './change-page.ts';
export { FeedImport } from './feed-import.ts';
export { PrefixIndex, prefixLengthFor, type PrefixList } from './prefix-index.ts';
export {
  readUpdatesTable,
  UpdatesIndex,
  workerTableBuilder,
  type BuiltTable,
  type TableBuilder,
} from './updates-index.ts';
export { UpdatesTable, type UpdatesTableParts } from './updates-table.ts';
export {
  recordKey,
  servedUpdates,
  workNotices,
  type ReclassifiedNotice,
  type ReplaceMode,
  type ReplaceReport,
  type StoredUpdate,
  type UpdateEvent,
  type UpdatesEntry,
  type WorkUpdates,
} from './work-updates.ts';
