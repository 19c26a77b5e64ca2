export { boundedText, discardBounded } from './bounded-text.ts';
export { buildCommit, gitCommit, UNKNOWN_COMMIT } from './build-commit.ts';
export {
  type ChildLog,
  childSide,
  idleSchedulingWorks,
  type LowPriorityChild,
  type Priority,
  priorityArgv,
  startLowPriority,
} from './child-process.ts';
export {
  type Fault,
  FaultError,
  type FileFaultCode,
  fault,
  type HttpFaultCode,
  type LineFaultCode,
  type PathFaultCode,
  RECOVERABLE_FILE_FAULTS,
  type RowFaultCode,
  type S3FaultCode,
} from './fault.ts';
export { STDERR_GIVE_UP_MS, type WriteFailure, writeAllSync } from './fd-write.ts';
export { type Libc, libc } from './libc.ts';
export {
  jsonLogger,
  type Level,
  type LogFormat,
  type Logger,
  silentLogger,
  stderrIsJournal,
  writeStderr,
} from './log.ts';
export { LruMap } from './lru-map.ts';
export { settlesWithin } from './settles-within.ts';
export { TokenBucket } from './token-bucket.ts';
export {
  jobWorkersEnded,
  programScript,
  selfCommand,
  type WorkerReply,
  workerJob,
  workerScript,
} from './worker-script.ts';
