export { Ingestor, type IngestorOptions, type IngestOutcome } from './ingestor.ts';
export { InlinePreparer, WorkerPreparer, type FilePreparer } from './file-preparer.ts';
export { IngestStats } from './stats.ts';
export { readBucketFile, statBucketFile, sha256, type BucketFile } from './read-bucket-file.ts';
export { importUpdates, detectFormat, type ImportResult } from './import-updates.ts';
export { readUpdates, type UpdateFormat, type ParsedUpdates } from './update-readers.ts';
export { importSource, openSource, type SourceResult, type ConditionalState } from './update-source.ts';
