export { backupRefused, writeBackupFolder } from './backup-folder.ts';
export { syncMadeFolders } from './durable-fs.ts';
export {
  bumpUpdatesGen,
  dataFileOf,
  META,
  openEnvironment,
  SCHEMA_VERSION,
  type SourceKind,
  type StoreDbs,
} from './environment.ts';
export {
  appliedEntry,
  conflictFault,
  decidedVersion,
  decideFile,
  emptyCounts,
  MAX_REPORTED_LINES,
  quarantineEntry,
  seenBefore,
  UNREAD_HASH,
  type ConflictEntry,
  type FileCounts,
  type FileDecision,
  type FileEntry,
  type FileIdentity,
  type FileOutcome,
} from './ledger.ts';
export { copyStore, pageFigures, spaceUsage, storeFileIn, type PageFigures, type SpaceUsage } from './store-file.ts';
export {
  classifyStoreError,
  LOW_SPACE_BYTES,
  StoreWriteError,
  storeWriteFault,
  writeTransaction,
  type StoreWriteCode,
} from './write-failure.ts';
