import { basename, dirname, resolve } from 'node:path';
import { jsonLogger, type Logger, silentLogger } from '../base/index.ts';
import type { Config, EnvName } from '../config/index.ts';
import {
  fileNameProblem,
  isHiddenOrTemp,
  mostRawBytes,
  type ParsedDeposit,
  parseDepositFile,
  rawSizeFault,
  unsafeKeyFault,
} from '../deposit/index.ts';
import { doiKey, readDoiForm } from '../doi/index.ts';
import { type IngestOutcome, Ingestor, type IngestorOptions, InlinePreparer, outcomeKey } from '../ingest/index.ts';
import { conflictFault, type Store } from '../store/index.ts';
import { historyDumpLine, writeDumpLines } from './dump-line.ts';
import { ingestRoot } from './ingest-copy.ts';
import { EXIT_INPUT_FAULTS, EXIT_OK, EXIT_USAGE, type Output } from './output.ts';
import { Progress } from './progress.ts';
import { rejectedTable } from './report-command.ts';
import { type Cell, type Listing, renderTable } from './table.ts';

/**
 * --dump: live holdings as JSON lines in store order (works while the daemon runs: LMDB readers never block);
 * with --history, every holding (tombstones too) with its events.
 */
export function dumpCommand(
  store: Store,
  filter: { platform?: string; doi?: string; history?: boolean },
  io: Output,
  progress = new Progress(false),
): number {
  const form = filter.doi !== undefined ? readDoiForm(filter.doi) : undefined;
  if (form?.problem !== undefined) {
    io.err(`--doi ${JSON.stringify(filter.doi)}: ${form.problem}`);
    return EXIT_USAGE;
  }
  const key = form && doiKey(form.bare);
  let lines = 0;
  const each = () => {
    if ((++lines & 4095) === 0)
      progress.update((s) => `dumping ${store.env}: ${lines.toLocaleString('en')} lines, ${s} s`);
  };
  try {
    if (!filter.history) {
      // a reader that left, or a disk that is full, wants no more: the dump stops there (output.ts says which)
      writeDumpLines(
        store,
        { platform: filter.platform, doiKey: key },
        (chunk) => io.outBytes(chunk),
        each,
        () => io.wanted(),
      );
      return EXIT_OK;
    }
    dumpHistories(store, key, filter.platform, (line) => {
      io.out(line);
      each();
      return io.wanted();
    });
    return EXIT_OK;
  } finally {
    progress.done();
  }
}

/** "1 record", "2 records", "0 records" */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `out` says whether more is wanted */
function dumpHistories(
  store: Store,
  key: string | undefined,
  platform: string | undefined,
  out: (line: string) => boolean,
): void {
  const files = new Map<number, string>();
  const fileOf = (seq: number) => {
    let k = files.get(seq);
    if (k === undefined) files.set(seq, (k = store.fileKeyOfSeq(seq) ?? `#${seq}`));
    return k;
  };
  for (const h of store.holdingHistories({ platform, doiKey: key })) {
    if (!out(JSON.stringify(historyDumpLine(store.env, h, fileOf)))) return;
  }
}

/** --validate: a publisher's dry run. Same parser as ingestion, nothing stored. */
export async function validateCommand(
  files: string[],
  config: Config,
  io: Output,
  listing: Listing = { tables: false },
): Promise<number> {
  const platforms = new Set(config.platforms.map((p) => p.name));
  let faults = 0;
  for (const path of files) {
    const name = basename(path);
    // the bucket's rules on a name, in its order: a name it never reads, unsafe as a path (BAD_PATH), the name itself
    if (isHiddenOrTemp(name)) {
      faults++;
      io.out(
        `${path}: IGNORED: a bucket takes a name starting with "." (or ending in .partial or ~) for an upload in progress and never reads it; rename it`,
      );
      continue;
    }
    const nameProblem = unsafeKeyFault(name) ?? fileNameProblem(name);
    const folder = basename(dirname(resolve(path)));
    if (!nameProblem && !platforms.has(folder))
      io.out(`${path}: note: "${folder}" is not a registered platform; deposit it as <platform>/${basename(path)}`);
    let parsed: ParsedDeposit | { code: string; message: string };
    try {
      const max = config.ingest.maxDecompressedBytes;
      // read with the size rule's bound, a byte more: a file that grew past it after its size was taken is not read whole
      const bytes = new Uint8Array(
        await Bun.file(path)
          .slice(0, mostRawBytes(max) + 1)
          .arrayBuffer(),
      );
      parsed =
        rawSizeFault(name, Math.max(Bun.file(path).size, bytes.length), max) ??
        (await parseDepositFile(bytes, { maxDecompressedBytes: max }));
    } catch (e) {
      parsed = { code: 'READ_FAILED', message: `cannot read: ${(e as Error).message}` };
    }
    if (nameProblem) {
      faults++;
      io.out(`${path}: REJECTED ${nameProblem.code}: ${nameProblem.message}`);
    }
    if ('code' in parsed) {
      faults++;
      io.out(`${path}: REJECTED ${parsed.code}: ${parsed.message}; nothing of this file would be applied`);
      continue;
    }
    const counts = `${count(parsed.recordLines, 'record')}, ${count(parsed.records.length, 'valid DOI')}, ${count(parsed.rejected.length, 'rejected line')}${parsed.superseded ? `, ${parsed.superseded} superseded by a later line` : ''}`;
    // the lines' counts alone would read as a file that applies: a bad name refuses all of it
    io.out(
      nameProblem
        ? `${path}: ${counts}; none of it would be applied: the file would be refused as a whole for its name (${nameProblem.code})`
        : `${path}: ${counts}`,
    );
    if (listing.tables && parsed.rejected.length > 0)
      for (const l of rejectedTable(parsed.rejected, listing.width - 2)) io.out(`  ${l}`);
    else
      for (const r of parsed.rejected) io.out(`  line ${r.line}${r.path ? ` ${r.path}` : ''}: ${r.code}: ${r.message}`);
    if (parsed.rejected.length > 0) faults++;
  }
  return faults > 0 ? EXIT_INPUT_FAULTS : EXIT_OK;
}

/**
 * --ingest: applies files given as .../<platform>/<name>.jsonl.gz, one after the other in the order given, through
 * the daemon's Ingestor (the folder above the platform's is the bucket folder); one from outside the environment's
 * bucket folder is read from a copy kept there (ingest-copy.ts). Many files apply as a backlog does in the daemon:
 * in passes of `ingest.passFiles`, or from `ingest.sortedPassFiles` files on as one sorted pass (its progress on stderr); each file's outcome is printed, in the order given, once its pass commits. A
 * stdout that fails stops none of it: the files asked for are applied, not some first part of them (their outcomes
 * stay in the ledger for --report).
 */
export async function ingestCommand(
  files: string[],
  store: Store,
  config: Config,
  io: Output,
  progress = new Progress(false),
  /** a sorted pass's progress lines (stderr) */
  log: Logger = jsonLogger(),
): Promise<number> {
  let faults = 0;
  let done = 0;
  const bucket = config.buckets[store.env];
  const given = files.map((path) => {
    const abs = resolve(path);
    const key = `${basename(dirname(abs))}/${basename(abs)}`;
    const root = bucket
      ? ingestRoot(abs, key, bucket.path, (m) => io.err(`doi-holdings: ${m}`))
      : dirname(dirname(abs));
    return { key, root };
  });
  for (const run of runsOfDistinctKeys(given)) {
    await ingestRun(store, config, run, log, (key, outcome) => {
      io.out(JSON.stringify(describeOutcome(store.env, key, outcome)));
      if (isFault(outcome)) faults++;
      done++;
      progress.update(
        (s) => `ingesting into ${store.env}: ${done} of ${files.length} files, ${faults} with faults, ${s} s`,
      );
    });
  }
  progress.done();
  return faults > 0 ? EXIT_INPUT_FAULTS : EXIT_OK;
}

/** The files given, cut where a key comes again: one Ingestor holds a key once, and the second time is a file of its own. */
function runsOfDistinctKeys<T extends { key: string }>(files: readonly T[]): T[][] {
  const runs: T[][] = [];
  let keys = new Set<string>();
  for (const f of files) {
    if (runs.length === 0 || keys.has(f.key)) {
      runs.push([]);
      keys = new Set();
    }
    runs.at(-1)!.push(f);
    keys.add(f.key);
  }
  return runs;
}

/**
 * Files of distinct keys through one Ingestor, in the order given: `report` is called for each, in that order (an
 * outcome known early, a file missing say, waits for the files before it; a key never reported, a hidden name,
 * is reported undefined at the end).
 */
async function ingestRun(
  store: Store,
  config: Config,
  files: readonly { key: string; root: string }[],
  log: Logger,
  report: (key: string, o: IngestOutcome | undefined) => void,
): Promise<void> {
  const outcomes = new Map<string, IngestOutcome>();
  let next = 0;
  const flush = (all: boolean) => {
    for (; next < files.length && (all || outcomes.has(files[next]!.key)); next++)
      report(files[next]!.key, outcomes.get(files[next]!.key));
  };
  // a backlog that takes a sorted pass is parsed on a worker, as the daemon's is, and tells its progress (stderr)
  const backlog = files.length >= config.ingest.sortedPassFiles;
  const ingestor = new Ingestor({
    ...cliIngestorOptions(store, config, files[0]!.root, false),
    ...(backlog ? { preparer: undefined, log: passLogger(log) } : {}),
    readFrom: new Map(files.map((f) => [f.key, f.root])),
    onOutcome: (o) => {
      outcomes.set(outcomeKey(o), o);
      flush(false);
    },
  });
  try {
    await ingestor.submit(files.map((f) => f.key));
    await ingestor.idle();
  } finally {
    await ingestor.close();
  }
  flush(true);
}

/** --failures: quarantined files and same-key conflicts, one JSON line each. */
export function failuresCommand(store: Store, io: Output, listing: Listing = { tables: false }): number {
  const rows: Cell[][] = [];
  for (const f of store.failures()) {
    let line: { env: string; kind: string; key: string; code?: string; message?: string; tries?: number };
    let lastModified: string | undefined;
    if (f.kind === 'quarantined') {
      const { key, code, message, tries, recordedAt } = f.entry;
      lastModified = new Date(f.entry.lastModified).toISOString();
      line = {
        env: store.env,
        kind: 'quarantined',
        key,
        code,
        message,
        tries,
        lastModified,
        recordedAt,
      } as typeof line;
    } else {
      line = {
        env: store.env,
        kind: 'conflict',
        key: f.conflict.key,
        ...conflictFault(f.conflict),
        recordedAt: f.conflict.recordedAt,
      } as typeof line;
    }
    // lines stream out; a table waits for its rows to know its columns' widths
    if (!listing.tables) io.out(JSON.stringify(line));
    else rows.push([line.kind, line.key, line.code, line.tries, lastModified, line.message]);
  }
  if (listing.tables && rows.length > 0)
    for (const l of renderTable(['kind', 'key', 'code', 'tries', 'lastModified', 'message'], rows, listing.width))
      io.out(l);
  else if (listing.tables) io.out(`no quarantined files and no conflicts in ${store.env}`);
  return EXIT_OK;
}

/** --retry KEY: clears the quarantine and applies the file from the environment's bucket folder now. */
export async function retryCommand(
  key: string,
  store: Store,
  env: EnvName,
  config: Config,
  io: Output,
): Promise<number> {
  const bucket = config.buckets[env];
  if (!bucket) {
    io.err(`no bucket is configured for ${env}`);
    return EXIT_USAGE;
  }
  const entry = store.fileEntry(key);
  if (!entry) {
    io.err(`${key}: not in the ${env} ledger; --failures lists what can be retried`);
    return EXIT_USAGE;
  }
  if (entry.outcome === 'applied') {
    io.err(
      store.conflictsOf(key).length > 0
        ? `${key}: a file with this key was already applied; the conflicting content cannot be applied under the same name. Ask the platform to deposit it under a new file name.`
        : `${key}: already applied; nothing to retry`,
    );
    return EXIT_USAGE;
  }
  const outcome = await ingestOne(store, config, bucket.path, key, true);
  io.out(JSON.stringify(describeOutcome(env, key, outcome)));
  return isFault(outcome) ? EXIT_INPUT_FAULTS : EXIT_OK;
}

/**
 * One file through an Ingestor of its own: the daemon's rules and decision, with one try (the operator is there
 * to see a fault, and --retry is theirs to run) and parsing on this thread.
 */
async function ingestOne(
  store: Store,
  config: Config,
  root: string,
  key: string,
  retry: boolean,
): Promise<IngestOutcome | undefined> {
  let outcome: IngestOutcome | undefined;
  const ingestor = new Ingestor({
    ...cliIngestorOptions(store, config, root, retry),
    onOutcome: (o) => {
      if (outcomeKey(o) === key) outcome = o;
    },
  });
  try {
    await ingestor.submit([key], { retry });
    await ingestor.idle();
  } finally {
    await ingestor.close();
  }
  return outcome;
}

/** An Ingestor as the CLI runs it: one try, parsing on this thread, faults reported rather than kept; --ingest's files in the order given. */
function cliIngestorOptions(store: Store, config: Config, root: string, retry: boolean): IngestorOptions {
  return {
    env: store.env,
    store,
    root,
    inOrderGiven: !retry,
    platforms: new Set(config.platforms.map((p) => p.name)),
    settings: { ...config.ingest, maxTries: 1 },
    log: silentLogger,
    preparer: new InlinePreparer(),
    recordUnreadable: false,
    keepUnrecorded: false,
  };
}

/** The lines of a sorted pass (pass.spilled, pass.chunk, pass.committed...): a first load of millions shows its progress. */
function passLogger(log: Logger): Logger {
  return { log: (level, event, fields) => (event.startsWith('pass.') ? log.log(level, event, fields) : undefined) };
}

function isFault(o: IngestOutcome | undefined): boolean {
  if (o?.status === 'applied') return (o.entry.counts?.rejected ?? 0) > 0;
  return o?.status !== 'duplicate' || o.entry.outcome === 'quarantined';
}

function describeOutcome(env: EnvName, key: string, o: IngestOutcome | undefined): Record<string, unknown> {
  switch (o?.status) {
    case 'applied':
      return {
        env,
        key: o.entry.key,
        outcome: 'applied',
        counts: o.entry.counts,
        rejectedLines: o.entry.rejectedLines,
      };
    case 'duplicate':
      // the same file again: decided before, as applied or as quarantined
      if (o.entry.outcome === 'quarantined')
        return {
          env,
          key: o.entry.key,
          outcome: 'quarantined',
          code: o.entry.code,
          message: `${o.entry.message} (already quarantined; --retry tries it again)`,
        };
      return { env, key: o.entry.key, outcome: 'duplicate', message: 'the same file was applied before; nothing done' };
    case 'conflict':
      return { env, key: o.conflict.key, outcome: 'conflict', ...conflictFault(o.conflict) };
    case 'quarantined':
      return { env, key: o.entry.key, outcome: 'quarantined', code: o.entry.code, message: o.entry.message };
    case 'unread':
      return { env, key: o.key, outcome: 'unreadable', code: o.fault.code, message: o.fault.message };
    case 'unreadable':
      return { env, key: o.entry.key, outcome: 'unreadable', code: o.fault.code, message: o.fault.message };
    case 'unrecorded':
      // the store is full: the file was not applied, and its quarantine could not be written either
      return {
        env,
        key: o.key,
        outcome: 'failed',
        code: o.fault.code,
        message: `${o.fault.message}; its quarantine could not be recorded either: ${o.writeFault.message}`,
      };
    case undefined:
      return {
        env,
        key,
        outcome: 'ignored',
        message: 'hidden and temporary file names (a leading dot, .partial, ~) are never ingested',
      };
  }
}
