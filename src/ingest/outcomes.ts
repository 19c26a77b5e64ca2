import type { Fault, FileFaultCode, Logger } from '../base/index.ts';
import type { EnvName } from '../config/index.ts';
import { conflictFault, type FileStatus, type StoreWriteCode } from '../store/index.ts';
import type { IngestStats } from './stats.ts';

/**
 * What became of a submitted file: the store's FileStatus; `unread`: not read and nothing written; `unrecorded`:
 * not applied, and its quarantine could not be written either (the store is full). The daemon keeps such a file
 * and tries it again later; `--ingest` and `--retry` report it.
 */
export type IngestOutcome =
  | FileStatus
  | { status: 'unread'; key: string; fault: Fault<'FILE_MISSING' | 'READ_FAILED' | 'BAD_PATH'> }
  | { status: 'unrecorded'; key: string; fault: Fault<FileFaultCode>; writeFault: Fault<StoreWriteCode> };

/** The bucket key an outcome is about. */
export function outcomeKey(o: IngestOutcome): string {
  return o.status === 'unread' || o.status === 'unrecorded'
    ? o.key
    : o.status === 'conflict'
      ? o.conflict.key
      : o.entry.key;
}

/** Where every outcome goes first: the ingest stats and the log. `now` is the ingestor's clock. */
export function countAndLog(
  o: IngestOutcome,
  to: { env: EnvName; log: Logger; stats: IngestStats; now: number },
  applyMs = 0,
): void {
  const { env, log, stats } = to;
  if (o.status === 'conflict') stats.noteDone(o.conflict.lastModified);
  else if (o.status !== 'unread' && o.status !== 'unrecorded') stats.noteDone(o.entry.lastModified);
  switch (o.status) {
    case 'applied':
      stats.noteApplied(o.entry, applyMs);
      log.log(o.entry.counts!.rejected > 0 ? 'warn' : 'info', 'file.applied', {
        env,
        key: o.entry.key,
        ...o.entry.counts,
        firstRejected: o.entry.rejectedLines?.slice(0, 3),
      });
      break;
    case 'quarantined':
      stats.quarantined++;
      stats.lastProgressAt = to.now;
      log.log('error', 'file.quarantined', { env, key: o.entry.key, code: o.entry.code, message: o.entry.message });
      break;
    case 'conflict':
      stats.conflicts++;
      log.log('error', 'file.conflict', { env, key: o.conflict.key, ...conflictFault(o.conflict) });
      break;
    case 'duplicate':
      log.log('debug', 'file.duplicate', { env, key: o.entry.key });
      break;
    case 'unreadable':
      log.log('error', 'file.unreadable', { env, key: o.entry.key, ...o.fault });
      break;
    case 'unread':
      if (o.fault.code === 'FILE_MISSING') log.log('debug', 'file.missing', { env, key: o.key });
      else log.log('error', 'file.unreadable', { env, key: o.key, code: o.fault.code, message: o.fault.message });
      break;
    case 'unrecorded':
      log.log('error', 'file.quarantine_failed', {
        env,
        key: o.key,
        code: o.writeFault.code,
        message: o.writeFault.message,
        fileCode: o.fault.code,
      });
      break;
  }
}
