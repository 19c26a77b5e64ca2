export {
  fault,
  FaultError,
  RECOVERABLE_FILE_FAULTS,
  type Fault,
  type FileFaultCode,
  type HttpFaultCode,
  type LineFaultCode,
  type PathFaultCode,
  type RowFaultCode,
  type S3FaultCode,
} from './fault.ts';
export { STDERR_GIVE_UP_MS, writeAllSync, type WriteFailure } from './fd-write.ts';
export { libc, type Libc } from './libc.ts';
export { jsonLogger, silentLogger, writeStderr, type Level, type Logger } from './log.ts';
export { settlesWithin } from './settles-within.ts';
export {
  jobWorkersEnded,
  programScript,
  selfCommand,
  workerJob,
  workerScript,
  type WorkerReply,
} from './worker-script.ts';
