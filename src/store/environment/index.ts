export { backupRefused, writeBackupFolder } from './backup-folder.ts';
export { syncMadeFolders } from './durable-fs.ts';
export {
  bumpUpdatesGen,
  META,
  openEnvironment,
  SCHEMA_VERSION,
  type SourceKind,
  type StoreDbs,
} from './environment.ts';
export {
  dataFileOf,
  type LmdbFileOptions,
  openLmdbFile,
  openTables,
  type Table,
  type Tables,
  table,
} from './lmdb-file.ts';
export {
  type FileReport,
  fileReport,
  markPlatformFiles,
  type PlatformFilesPage,
  platformFilesPage,
  platformOfEntry,
  putFileEntry,
  syncPlatformFiles,
} from './platform-files.ts';
export { copyStore, type PageFigures, pageFigures, type SpaceUsage, spaceUsage, storeFileIn } from './store-file.ts';
export {
  classifyStoreError,
  LOW_SPACE_BYTES,
  type StoreWriteCode,
  StoreWriteError,
  storeWriteFault,
  writeTransaction,
} from './write-failure.ts';
