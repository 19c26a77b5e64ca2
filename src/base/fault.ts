/**
 * Errors as values: a stable `code` that tests, metrics, logs and the ledger keep, and a message a person can
 * act on. Bad input is returned as a Fault; only bugs are thrown. Every code the program can give is listed
 * here, by where it arises, so `Fault.code` is typed and a misspelt code fails `tsc`.
 */
export const FAULT_CODES = {
  /** a bucket key breaks the layout rules: nothing of the file is read */
  path: [
    'BAD_PATH',
    'NOT_IN_PLATFORM_FOLDER',
    'NESTED_PATH',
    'UNKNOWN_PLATFORM',
    'BAD_EXTENSION',
    'NAME_WITHOUT_UUID',
    'NOT_REGULAR_FILE',
  ],
  /** a deposit file as a whole: nothing of it is applied */
  file: [
    'EMPTY_FILE',
    'NOT_GZIP',
    'GZIP_TRUNCATED',
    'GZIP_CORRUPT',
    'TOO_LARGE',
    'TOO_MANY_RECORDS',
    'READ_FAILED',
    'FILE_MISSING',
    'APPLY_FAILED',
    'STORE_FULL',
    'DISK_FULL',
    'LATER_FILE_UNREADABLE',
  ],
  /** a key already applied with other content: the new content is never applied */
  conflict: ['KEY_REUSED'],
  /** one line of a deposit: the line is rejected, the rest of the file applies */
  line: ['INVALID_UTF8', 'LINE_TOO_LONG', 'INVALID_JSON', 'NOT_AN_OBJECT', 'SCHEMA', 'INVALID_DOI'],
  /** one row of an update source: skipped and counted, never fatal */
  updateRow: [
    'SHORT_ROW',
    'NO_ORIGINAL_DOI',
    'BAD_DOI',
    'BAD_DATE',
    'NO_UPDATE_TYPE',
    'INVALID_JSON',
    'MIRRORED_RELATION',
  ],
  /** an update source as a whole: nothing of it is applied */
  updateSource: [
    'SOURCE_UNREACHABLE',
    'SOURCE_HTTP_ERROR',
    'SOURCE_NOT_FOUND',
    'SOURCE_READ_FAILED',
    'RW_MISSING_COLUMN',
    'RW_EMPTY',
    'SNAPSHOT_SHRINK',
    'IMPORT_ROWS_LOST',
    'HARVEST_UNREACHABLE',
    'HARVEST_HTTP_ERROR',
    'HARVEST_BAD_PAGE',
    'HARVEST_CURSOR_EXPIRED',
    'HARVEST_STOPPED',
    'HARVEST_PROCESS_FAILED',
    'IMPORT_PROCESS_FAILED',
    'IMPORT_STOPPED',
  ],
  /** an S3 bucket that cannot be listed or read, or a mirror folder that cannot be written (S3_MIRROR_WRITE) */
  s3: ['S3_CREDENTIALS', 'S3_NO_SUCH_BUCKET', 'S3_SERVER_ERROR', 'S3_UNREACHABLE', 'S3_MIRROR_WRITE'],
  /** start-up and command line (OUTPUT_FAILED: stdout could not be written, other than by its reader leaving) */
  config: ['CONFIG_UNREADABLE', 'CONFIG_NOT_TOML', 'CONFIG_INVALID', 'USAGE', 'OUTPUT_FAILED'],
  store: [
    'STORE_OPEN_FAILED',
    'STORE_NOT_MADE',
    'STORE_SCHEMA_MISMATCH',
    'BACKUP_EXISTS',
    'BACKUP_RUNNING',
    'BACKUP_FAILED',
  ],
  /** an Entitlement API entry by metadata that could not be looked up at Crossref (its entry answers 504) */
  lookup: ['LOOKUP_TIMEOUT', 'LOOKUP_UNAVAILABLE'],
  /** request-level HTTP errors (the `error` of an error body) */
  http: [
    'BAD_REQUEST',
    'INVALID_JSON',
    'UNAUTHORIZED',
    'NOT_FOUND',
    'METHOD_NOT_ALLOWED',
    'PAYLOAD_TOO_LARGE',
    'REQUEST_TIMEOUT',
    'UNSUPPORTED_MEDIA_TYPE',
    'NOT_CONFIGURED',
    'CURSOR_EXPIRED',
    'INTERNAL',
    /** over a rate limit: 429, with Retry-After */
    'RATE_LIMITED',
    /**
     * push alerts: a target URL deliveries may not go to; a watch list over its bound; an integrator's subscriptions
     * over theirs; not the delivering replica
     */
    'TARGET_REFUSED',
    'WATCH_LIST_FULL',
    'TOO_MANY_SUBSCRIPTIONS',
    'WEBHOOKS_NOT_HERE',
  ],
} as const;

type CodesOf<K extends keyof typeof FAULT_CODES> = (typeof FAULT_CODES)[K][number];
export type PathFaultCode = CodesOf<'path'>;
/** what can stop a deposit file: its path, its content, reading or applying it */
export type FileFaultCode = PathFaultCode | CodesOf<'file'>;
export type LineFaultCode = CodesOf<'line'>;
export type RowFaultCode = CodesOf<'updateRow'>;
export type S3FaultCode = CodesOf<'s3'>;
export type HttpFaultCode = CodesOf<'http'>;
type FaultCode = { [K in keyof typeof FAULT_CODES]: CodesOf<K> }[keyof typeof FAULT_CODES];

export interface Fault<C extends FaultCode = FaultCode> {
  readonly code: C;
  readonly message: string;
}

export function fault<C extends FaultCode>(code: C, message: string): Fault<C> {
  return { code, message };
}

/**
 * File faults that may pass by themselves (a file still being written, a read or a transaction that failed, the
 * store's map or its filesystem full until the operator makes room): retried with backoff before they quarantine
 * the file. Every other file fault quarantines it at once.
 */
export const RECOVERABLE_FILE_FAULTS: ReadonlySet<FileFaultCode> = new Set<FileFaultCode>([
  'GZIP_TRUNCATED',
  'READ_FAILED',
  'APPLY_FAILED',
  'STORE_FULL',
  'DISK_FULL',
]);

/** Thrown where a Fault must cross a boundary that only knows exceptions (start-up, CLI, a source's reader). */
export class FaultError extends Error {
  constructor(readonly fault: Fault) {
    super(fault.message);
    this.name = fault.code;
  }
  get code(): FaultCode {
    return this.fault.code;
  }
}
