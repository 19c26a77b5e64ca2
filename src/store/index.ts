export { Store, type PreparedFile, type ApplyStatus, type HoldingView, type DumpLine } from './store.ts';
export type { FileEntry, FileCounts, ConflictEntry, FileOutcome } from './ledger-types.ts';
export { MAX_REPORTED_LINES } from './ledger-types.ts';
export type { HoldingEvent, EventKind, HoldingState } from './holding-codec.ts';
export { SCHEMA_VERSION } from './environment.ts';
export {
  servedUpdates,
  type StoredUpdate,
  type UpdateEvent,
  type UpdatesEntry,
  type WorkUpdates,
  type ReplaceReport,
  type ReplaceMode,
} from './updates-store.ts';
export { UpdatesIndex } from './updates-index.ts';
export { UpdatesTable } from './updates-table.ts';
