export { Ingestor, type IngestorOptions } from './ingestor.ts';
export { IngestStats } from './stats.ts';
export { prepareFile } from './prepare.ts';
export { readBucketFile, statBucketFile, sha256, type BucketFile } from './read-bucket-file.ts';
export { ingestFileNow, type IngestOutcome } from './ingest-file.ts';
export { importUpdates, detectFormat, type ImportResult } from './import-updates.ts';
export { readUpdates, type UpdateFormat, type ParsedUpdates } from './update-readers.ts';
export { importSource, openSource, type SourceResult, type ConditionalState } from './update-source.ts';
