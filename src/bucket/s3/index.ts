export { describeS3Error, s3ClientFor } from './client.ts';
export { supersededCopies, supersededFolder } from './mirror-place.ts';
export { S3Mirror, SAME_SECOND_GUARD_MS, type S3MirrorOptions, type SyncResult } from './mirror.ts';
