/**
 * The ingest benchmark's measuring process (spawned by bench/ingest.ts so its heap holds only what ingesting
 * needs). Drives the real Ingestor over a real bucket folder into a real LMDB file, and prints one JSON line.
 *   (a) initial load, (b) churn at 1M, (c) unchanged re-deposit at 1M: files arriving one at a time, as in a
 *       running daemon (submit, then wait until it is applied): per-file time = read + parse + apply + commit;
 *   (d) cold catch-up: a fresh store started on the bucket holding the files of (a) and (b), scanned as the
 *       daemon does at start (all queued at once, so it batches).
 * Also the ceiling: read + gunzip + parse + validate of the files of (a), no store.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '../src/base/log.ts';
import { scanBucketFolder } from '../src/bucket/index.ts';
import { DEFAULT_INGEST } from '../src/config/index.ts';
import { parseDepositFile } from '../src/deposit/index.ts';
import { WorkerPreparer } from '../src/ingest/file-preparer.ts';
import { Ingestor } from '../src/ingest/index.ts';
import { Store } from '../src/store/index.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import type { Manifest } from './lib/ingest-data.ts';
import { PeakMemory, percentile } from './lib/measure.ts';

export interface ScenarioResult {
  name: string;
  files: number;
  records: number;
  seconds: number;
  recordsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  counts: Record<string, number>;
}

const [dataDir, workDir] = process.argv.slice(2);
if (!dataDir || !workDir) throw new Error('usage: bun bench/ingest-lmdb.ts DATA_DIR WORK_DIR');
const manifest = JSON.parse(readFileSync(join(dataDir, 'manifest.json'), 'utf8')) as Manifest;
const platforms = new Set(PLATFORM_NAMES);
const settings = { ...DEFAULT_INGEST };
const MAP = 16 * 1024 ** 3;

async function ceiling(): Promise<{ recordsPerSecond: number }> {
  let records = 0;
  const t0 = performance.now();
  for (const key of manifest.a) {
    const bytes = await readFile(join(dataDir, 'bucket', key));
    const parsed = await parseDepositFile(bytes, settings);
    if ('code' in parsed) throw new Error(`${key}: ${parsed.message}`);
    records += parsed.recordLines;
  }
  return { recordsPerSecond: records / ((performance.now() - t0) / 1000) };
}

/**
 * An Ingestor whose parse worker is already running, as in a daemon (its worker lives as long as the process):
 * the ~50 ms worker start is not part of a scenario's time.
 */
async function ingestorFor(store: Store, root: string): Promise<Ingestor> {
  const preparer = new WorkerPreparer();
  await preparer.prepare({ root, key: 'warm-up/none.jsonl.gz', platforms: [], maxDecompressedBytes: 1024, tries: 1 });
  return new Ingestor({ env: 'production', store, root, platforms, settings, log: silentLogger, preparer });
}

/** Files one at a time through the Ingestor, as they arrive in a running daemon. */
async function oneByOne(
  name: string,
  store: Store,
  root: string,
  keys: string[],
  mem: PeakMemory,
): Promise<ScenarioResult> {
  const ingestor = await ingestorFor(store, root);
  const times: number[] = [];
  const t0 = performance.now();
  for (const key of keys) {
    const t = performance.now();
    await ingestor.submit([key]);
    await ingestor.idle();
    times.push(performance.now() - t);
    mem.sample();
  }
  const seconds = (performance.now() - t0) / 1000;
  await ingestor.close();
  return result(name, store, keys, seconds, times, ingestor);
}

/**
 * All files queued at once: a daemon starting on a bucket that already holds them (keys from the same folder
 * scan the daemon does), or a publisher's burst of uploads.
 */
async function queued(
  name: string,
  store: Store,
  root: string,
  only: string[] | undefined,
  mem: PeakMemory,
): Promise<ScenarioResult> {
  const ingestor = await ingestorFor(store, root);
  const t0 = performance.now();
  const scanned = await scanBucketFolder(root);
  const keys = only ? scanned.filter((k) => only.includes(k)) : scanned;
  await ingestor.submit(keys);
  await ingestor.idle();
  const seconds = (performance.now() - t0) / 1000;
  mem.sample();
  await ingestor.close();
  // per-file figures from the ledger: the main thread's apply time in the transaction (reading and parsing
  // happen in the worker meanwhile; the commit is shared by the batch)
  const times = keys.map((k) => store.fileEntry(k)!.timings!.applyMs);
  return result(name, store, keys, seconds, times, ingestor);
}

function result(
  name: string,
  store: Store,
  keys: string[],
  seconds: number,
  times: number[],
  ingestor: Ingestor,
): ScenarioResult {
  let records = 0;
  for (const k of keys) {
    const e = store.fileEntry(k);
    if (e?.outcome !== 'applied') throw new Error(`${name}: ${k} was not applied: ${JSON.stringify(e)}`);
    records += e.counts!.records;
  }
  return {
    name,
    files: keys.length,
    records,
    seconds,
    recordsPerSecond: records / seconds,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    counts: { ...ingestor.stats.records },
  };
}

function diskFigures(store: Store): {
  holdings: number;
  live: number;
  usedBytes: number;
  allocatedBytes: number;
  holdingsTreeBytes: number;
} {
  const space = store.spaceUsage();
  const file = statSync(join(store.path, 'data.mdb'));
  const live = Object.values(store.liveCounts()).reduce((a, b) => a + b, 0);
  return {
    holdings: space.holdings.entries,
    live,
    usedBytes: space.usedPages * space.pageSize,
    allocatedBytes: file.blocks * 512,
    holdingsTreeBytes: space.holdings.pages * space.pageSize,
  };
}

rmSync(workDir, { recursive: true, force: true });
const mem = new PeakMemory();
const ceil = await ceiling();
const bucket = join(dataDir, 'bucket');
const bucketC = join(dataDir, 'bucket-c');

// files arriving one at a time in a running daemon
const store = Store.open(join(workDir, 'db-1'), 'production', { mapSizeBytes: MAP });
const a1 = await oneByOne('a', store, bucket, manifest.a, mem);
const diskAfterA = diskFigures(store);
const b1 = await oneByOne('b', store, bucket, manifest.b, mem);
const c1 = await oneByOne('c', store, bucketC, manifest.c, mem);
await store.close();

// each scenario's files dropped together (a publisher's burst): the ingestor batches them
const burst = Store.open(join(workDir, 'db-2'), 'production', { mapSizeBytes: MAP });
const a2 = await queued('a', burst, bucket, manifest.a, mem);
const b2 = await queued('b', burst, bucket, manifest.b, mem);
const c2 = await queued('c', burst, bucketC, manifest.c, mem);
await burst.close();

// a fresh store started on the bucket holding the files of (a) and (b)
const fresh = Store.open(join(workDir, 'db-3'), 'production', { mapSizeBytes: MAP });
const d = await queued('d', fresh, bucket, undefined, mem);
const diskAfterD = diskFigures(fresh);
await fresh.close();
mem.stop();
rmSync(workDir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    ceiling: ceil,
    oneByOne: { a: a1, b: b1, c: c1 },
    queued: { a: a2, b: b2, c: c2, d },
    diskAfterA,
    diskAfterD,
    peakHeapBytes: mem.heapBytes,
    peakRssBytes: mem.rssBytes,
  }),
);
