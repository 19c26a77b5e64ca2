import zlib from 'node:zlib';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type Fault, type FileFaultCode, fault, type LineFaultCode } from '../base/index.ts';
import { doiKey, doiProblem, plainDoiKey } from '../doi/index.ts';
import { DepositRecord } from './schema.ts';
import { describeSchemaError } from './schema-words.ts';

/** Lines, records, and the faults that reject a line or a whole file (docs/interface.md, "Depositing holdings"). */

export const MAX_RECORDS_PER_FILE = 10_000;
export const MAX_LINE_BYTES = 65_536;

const checkRecord = TypeCompiler.Compile(DepositRecord);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface ParsedRecord {
  /** 1-based line number in the decompressed file */
  line: number;
  key: string;
  record: DepositRecord;
}

export interface RejectedLine {
  line: number;
  /** JSON pointer of the failing field, `` for the whole line */
  path: string;
  code: LineFaultCode;
  message: string;
}

export interface ParsedDeposit {
  /** valid records, one per DOI key (later lines win), sorted by key */
  records: ParsedRecord[];
  rejected: RejectedLine[];
  /** non-blank lines: the count the 10,000 limit applies to */
  recordLines: number;
  /** valid records overridden by a later line for the same DOI */
  superseded: number;
  decompressedBytes: number;
}

export interface ParseOptions {
  maxDecompressedBytes: number;
}

/** Gunzips then parses. A file-level fault means nothing of the file may be applied. */
export async function parseDepositFile(
  gz: Uint8Array,
  opts: ParseOptions,
): Promise<ParsedDeposit | Fault<FileFaultCode>> {
  const raw = gunzip(gz, opts.maxDecompressedBytes);
  if ('code' in raw) return raw;
  return parseDepositText(raw.bytes);
}

function gunzip(gz: Uint8Array, max: number): { bytes: Uint8Array } | Fault<FileFaultCode> {
  if (gz.length === 0) return fault('EMPTY_FILE', 'the file is empty (0 bytes): not a gzip file');
  if (gz.length < 2 || gz[0] !== 0x1f || gz[1] !== 0x8b)
    return fault('NOT_GZIP', 'the content is not gzip-compressed (no gzip header)');
  try {
    // Synchronous: ~1.5 ms for a 10k-record file, where the thread-pool round trip of zlib.gunzip costs more.
    // 256 KiB output chunks: the 16 KiB default costs ~3x more calls into zlib (docs/performance.md)
    const out = zlib.gunzipSync(gz, { maxOutputLength: max, chunkSize: 256 * 1024, info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    // zlib stops at a zero byte after a member (padding) and passes over whatever follows it: refused here
    const end = out.engine.bytesWritten;
    if (end < gz.length && gz.subarray(end).some((b) => b !== 0))
      return fault(
        'GZIP_CORRUPT',
        `the gzip stream is corrupt: ${gz.length - end} bytes after its end (from byte ${end}) are neither another gzip member nor zero padding`,
      );
    return { bytes: out.buffer };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_BUFFER_TOO_LARGE')
      return fault('TOO_LARGE', `the decompressed content is over the ${max}-byte bound`);
    if (err.code === 'Z_BUF_ERROR')
      return fault('GZIP_TRUNCATED', 'the gzip stream is truncated (unexpected end of file)');
    // the first member's header was checked above: a bad header is that of bytes after a member
    if (err.message === 'incorrect header check')
      return fault(
        'GZIP_CORRUPT',
        'the gzip stream is corrupt: the bytes after its end are neither another gzip member nor zero padding (incorrect header check)',
      );
    return fault('GZIP_CORRUPT', `the gzip stream is corrupt: ${err.message}`);
  }
}

/** Parses decompressed NDJSON bytes. */
export function parseDepositText(bytes: Uint8Array): ParsedDeposit | Fault<FileFaultCode> {
  let start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const byKey = new Map<string, ParsedRecord>();
  const rejected: RejectedLine[] = [];
  let recordLines = 0;
  let superseded = 0;
  let lineNo = 0;
  // Decode the whole file at once when it is valid UTF-8 (the common case); else line by line.
  const whole = decodeOrNull(bytes.subarray(start));
  // one line at a time, not split('\n'): 64 MiB of "\n" would be an array of 64 million strings (over 1 GB)
  let pos = 0;
  while (whole !== null ? pos <= whole.length : start < bytes.length) {
    lineNo++;
    let text: string | null;
    let overLong: boolean;
    if (whole !== null) {
      let end = whole.indexOf('\n', pos);
      if (end < 0) end = whole.length;
      text = whole.slice(pos, end);
      pos = end + 1;
      if (end === whole.length && text === '') break; // the final "\n" ends the last line
      if (text.endsWith('\r')) text = text.slice(0, -1);
      overLong = text.length > MAX_LINE_BYTES / 3 && Buffer.byteLength(text, 'utf8') > MAX_LINE_BYTES;
    } else {
      let end = bytes.indexOf(0x0a, start);
      if (end < 0) end = bytes.length;
      let lineEnd = end;
      if (lineEnd > start && bytes[lineEnd - 1] === 0x0d) lineEnd--;
      const slice = bytes.subarray(start, lineEnd);
      start = end + 1;
      overLong = slice.length > MAX_LINE_BYTES;
      text = overLong ? '' : decodeOrNull(slice);
      if (text === null) {
        if (++recordLines > MAX_RECORDS_PER_FILE) return tooManyRecords(lineNo, recordLines);
        rejected.push({ line: lineNo, path: '', code: 'INVALID_UTF8', message: 'the line is not valid UTF-8' });
        continue;
      }
    }
    if (!overLong && text.charCodeAt(0) !== 0x7b && isBlank(text)) continue;
    if (++recordLines > MAX_RECORDS_PER_FILE) return tooManyRecords(lineNo, recordLines);
    if (overLong) {
      rejected.push({
        line: lineNo,
        path: '',
        code: 'LINE_TOO_LONG',
        message: `the line is over ${MAX_LINE_BYTES} bytes`,
      });
      continue;
    }
    const outcome = parseRecordLine(text, lineNo);
    if ('code' in outcome) {
      rejected.push(outcome);
      continue;
    }
    if (byKey.has(outcome.key)) superseded++;
    byKey.set(outcome.key, outcome);
  }
  // key order (the store's page order); the comparator-free sort of strings is several times faster
  const records = [...byKey.keys()].sort().map((k) => byKey.get(k)!);
  return { records, rejected, recordLines, superseded, decompressedBytes: bytes.length };
}

/** One line to a validated record, or the reason it is rejected. */
export function parseRecordLine(text: string, line: number): ParsedRecord | RejectedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { line, path: '', code: 'INVALID_JSON', message: `not valid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { line, path: '', code: 'NOT_AN_OBJECT', message: 'each line must be one JSON object' };
  if (!checkRecord.Check(value)) {
    const err = checkRecord.Errors(value).First()!;
    return { line, path: err.path, code: 'SCHEMA', message: describeSchemaError(err, value) };
  }
  // a \uD800-\uDFFF escape without its pair passes the schema but has no UTF-8 form: it could not be stored as sent
  for (let i = 0; value.vor && i < value.vor.length; i++)
    if (!value.vor[i]!.url.isWellFormed())
      return {
        line,
        path: `/vor/${i}/url`,
        code: 'SCHEMA',
        message: 'contains a lone UTF-16 surrogate (a \\u escape without its pair)',
      };
  // the one-pass check takes nearly every DOI; what it declines gets the full rules and their reasons
  const plain = plainDoiKey(value.doi);
  if (plain !== undefined) return { line, key: plain, record: value };
  const problem = doiProblem(value.doi);
  if (problem)
    return {
      line,
      path: '/doi',
      code: 'INVALID_DOI',
      message: `doi ${JSON.stringify(value.doi.slice(0, 80))}: ${problem}`,
    };
  return { line, key: doiKey(value.doi), record: value };
}

/** Every non-blank line is a record, valid or not: the one that passes the bound rejects the file whole. */
function tooManyRecords(lineNo: number, recordLines: number): Fault<FileFaultCode> {
  return fault(
    'TOO_MANY_RECORDS',
    `the file has more than ${MAX_RECORDS_PER_FILE} records (line ${lineNo} is record ${recordLines}); nothing was applied`,
  );
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return true;
}

function decodeOrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}
