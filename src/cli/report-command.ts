import { join } from 'node:path';
import type { Config, EnvName } from '../config/index.ts';
import type { RejectedLine } from '../deposit/index.ts';
import type { Store } from '../store/index.ts';
import { EXIT_OK, EXIT_USAGE, type Output } from './output.ts';
import { fieldRows, type Listing, renderTable } from './table.ts';

/**
 * --report KEY...: what the ledger keeps of each file (docs/design.md, "Deposit records and file outcomes": every
 * file gets a report, which operators read here): its outcome, counts, rejected lines, timings, tries, and the
 * same-key conflicts recorded against it. One JSON line per key; a key the ledger does not hold is named on stderr.
 */
export function reportCommand(
  keys: readonly string[],
  store: Store,
  env: EnvName,
  config: Config,
  io: Output,
  listing: Listing = { tables: false },
): number {
  let unknown = 0;
  for (const key of keys) {
    const entry = store.fileEntry(key);
    if (!entry) {
      unknown++;
      io.err(`${key}: not in the ${env} ledger (keys are <platform>/<name>.jsonl.gz, as the bucket names them)`);
      continue;
    }
    // the report publishers get (store.fileReport), with what only the operator has: where --ingest read the
    // file, and how to list the rejected lines the ledger only counted
    const line: Record<string, unknown> = store.fileReport(key)!;
    if (entry.readFrom !== undefined) line.readFrom = entry.readFrom;
    if (entry.rejectedNotListed) {
      const bucket = config.buckets[env];
      line.note = `${entry.rejectedNotListed} more rejected lines were counted, not kept: doi-holdings --validate ${bucket ? join(bucket.path, key) : key} lists every one`;
    }
    if (listing.tables) reportTables(line, io, listing.width);
    else io.out(JSON.stringify(line));
  }
  return unknown > 0 ? EXIT_USAGE : EXIT_OK;
}

/** One file's report at a terminal: its fields, then its rejected lines and conflicts as rows of their own. */
function reportTables(line: Record<string, unknown>, io: Output, width: number): void {
  const { rejectedLines, conflicts, ...fields } = line;
  for (const l of renderTable(['field', 'value'], fieldRows(fields), width)) io.out(l);
  const rejected = (rejectedLines ?? []) as RejectedLine[];
  if (rejected.length > 0) {
    io.out('');
    for (const l of rejectedTable(rejected, width)) io.out(l);
  }
  const conflicting = (conflicts ?? []) as {
    code: string;
    message: string;
    lastModified: string;
    recordedAt: string;
  }[];
  if (conflicting.length > 0) {
    io.out('');
    const rows = conflicting.map((c) => [c.lastModified, c.recordedAt, c.code, c.message]);
    for (const l of renderTable(['lastModified', 'recordedAt', 'code', 'message'], rows, width)) io.out(l);
  }
  io.out('');
}

/** Rejected lines as a table: --report's and --validate's. */
export function rejectedTable(rejected: readonly RejectedLine[], width: number): string[] {
  const rows = rejected.map((r) => [r.line, r.path ?? '', r.code, r.message]);
  return renderTable(['line', 'path', 'code', 'message'], rows, width);
}
