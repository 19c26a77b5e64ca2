export { type FileStat, statBucketFile } from './file-stat.ts';
export { scanBucketFolder, toKey } from './local-scan.ts';
export { FolderWatch, type FolderWatchOptions } from './local-watch.ts';
export { type HoldsFile, heldStill, missedFiles } from './rescan.ts';
export {
  describeS3Error,
  REPORTS_FOLDER,
  ReportWriter,
  S3Mirror,
  type S3MirrorOptions,
  SAME_SECOND_GUARD_MS,
  type SyncResult,
  s3ClientFor,
  supersededCopies,
  supersededFolder,
} from './s3/index.ts';
