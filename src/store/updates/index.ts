export { decodeCursor, encodeCursor, type FeedCursor } from './change-cursor.ts';
export { DEFAULT_KEEP_MS, type FeedHead, keyHash, startChangeFeed } from './change-feed.ts';
export { ChangeFeedView } from './change-feed-view.ts';
export type { ChangesPage, CursorRefusal } from './change-page.ts';
export { FeedImport } from './feed-import.ts';
export { PrefixIndex, type PrefixList, prefixLengthFor } from './prefix-index.ts';
export {
  type BuiltTable,
  readUpdatesTable,
  type TableBuilder,
  UpdatesIndex,
  workerTableBuilder,
} from './updates-index.ts';
export { UpdatesTable, type UpdatesTableParts } from './updates-table.ts';
export {
  type ReclassifiedNotice,
  type ReplaceMode,
  type ReplaceReport,
  recordKey,
  type StoredUpdate,
  servedUpdates,
  type UpdateEvent,
  type UpdatesEntry,
  type WorkUpdates,
  workNotices,
} from './work-updates.ts';
