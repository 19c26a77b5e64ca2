export { Ingestor, type IngestorOptions, type IngestOutcome } from './ingestor.ts';
export { InlinePreparer, WorkerPreparer, type FilePreparer } from './file-preparer.ts';
export { IngestStats } from './stats.ts';
export { outcomeKey } from './outcomes.ts';
export { readBucketFile, sha256, type BucketFile } from './read-bucket-file.ts';
