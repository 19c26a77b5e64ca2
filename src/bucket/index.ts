export { FolderWatch, type FolderWatchOptions } from './local-watch.ts';
export { scanBucketFolder, toKey } from './local-scan.ts';
export { statBucketFile, type FileStat } from './file-stat.ts';
export { heldStill, missedFiles, type HoldsFile } from './rescan.ts';
export { supersededCopies, supersededFolder } from './s3/index.ts';
export { S3Mirror, SAME_SECOND_GUARD_MS, type S3MirrorOptions, type SyncResult } from './s3/index.ts';
export { s3ClientFor, describeS3Error } from './s3/index.ts';
