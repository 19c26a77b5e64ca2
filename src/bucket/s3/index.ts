export { describeS3Error, s3ClientFor } from './client.ts';
export { S3Mirror, type S3MirrorOptions, SAME_SECOND_GUARD_MS, type SyncResult } from './mirror.ts';
export { supersededCopies, supersededFolder } from './mirror-place.ts';
export { REPORTS_FOLDER, ReportWriter } from './report-writer.ts';
