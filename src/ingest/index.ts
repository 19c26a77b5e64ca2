export { type FilePreparer, InlinePreparer, WorkerPreparer } from './file-preparer.ts';
export { type IngestOutcome, Ingestor, type IngestorOptions } from './ingestor.ts';
export { outcomeKey } from './outcomes.ts';
export { type BucketFile, readBucketFile, sha256 } from './read-bucket-file.ts';
export { IngestStats } from './stats.ts';
