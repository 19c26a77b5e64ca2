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
import { scanBucketFolder } from '../src/bucket/index.ts';
import { DEFAULT_INGEST } from '../src/config/index.ts';
import { parseDepositFile } from '../src/deposit/index.ts';
import { Ingestor } from '../src/ingest/index.ts';
import { silentLogger } from '../src/log.ts';
import { Store } from '../src/store/index.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import { PeakMemory, percentile } from './lib/measure.ts';
import type { Manifest } from './ingest-generate.ts';

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

/** Files one at a time through the Ingestor, as they arrive in a running daemon. */
async function oneByOne(name: string, store: Store, root: string, keys: string[], mem: PeakMemory): Promise<ScenarioResult> {
  const ingestor = new Ingestor({ env: 'production', store, root, platforms, settings, log: silentLogger });
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

/** All files queued at once, as at the start of a daemon whose bucket already holds them. */
async function catchUp(name: string, store: Store, root: string, mem: PeakMemory): Promise<ScenarioResult> {
  const ingestor = new Ingestor({ env: 'production', store, root, platforms, settings, log: silentLogger });
  const t0 = performance.now();
  const keys = await scanBucketFolder(root);
  await ingestor.submit(keys);
  await ingestor.idle();
  const seconds = (performance.now() - t0) / 1000;
  mem.sample();
  await ingestor.close();
  // per-file figures from the ledger: parse and apply per file, plus the batch's commit shared out
  const times = keys.map((k) => {
    const e = store.fileEntry(k)!;
    return e.timings!.readMs + e.timings!.parseMs + e.timings!.applyMs;
  });
  return result(name, store, keys, seconds, times, ingestor);
}

function result(name: string, store: Store, keys: string[], seconds: number, times: number[], ingestor: Ingestor): ScenarioResult {
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

function diskFigures(store: Store): { holdings: number; live: number; usedBytes: number; allocatedBytes: number; holdingsTreeBytes: number } {
  const root = store.dbs.root.getStats() as { pageSize: number; lastPageNumber: number };
  const h = store.dbs.holdings.getStats() as { entryCount: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; pageSize: number };
  const file = statSync(join(store.path, 'data.mdb'));
  const live = Object.values(store.liveCounts()).reduce((a, b) => a + b, 0);
  return {
    holdings: h.entryCount,
    live,
    usedBytes: (root.lastPageNumber + 1) * root.pageSize,
    allocatedBytes: file.blocks * 512,
    holdingsTreeBytes: (h.treeBranchPageCount + h.treeLeafPageCount + h.overflowPages) * h.pageSize,
  };
}

rmSync(workDir, { recursive: true, force: true });
const mem = new PeakMemory();
const ceil = await ceiling();
const store = Store.open(join(workDir, 'db'), 'production', { mapSizeBytes: MAP });
const a = await oneByOne('(a) initial load 0 -> 1M', store, join(dataDir, 'bucket'), manifest.a, mem);
const diskAfterA = diskFigures(store);
const b = await oneByOne('(b) churn at 1M', store, join(dataDir, 'bucket'), manifest.b, mem);
const c = await oneByOne('(c) unchanged re-deposit at 1M', store, join(dataDir, 'bucket-c'), manifest.c, mem);
const diskAfterC = diskFigures(store);
await store.close();
const fresh = Store.open(join(workDir, 'db-d'), 'production', { mapSizeBytes: MAP });
const d = await catchUp('(d) cold catch-up, 120 files', fresh, join(dataDir, 'bucket'), mem);
const diskAfterD = diskFigures(fresh);
await fresh.close();
mem.stop();
rmSync(workDir, { recursive: true, force: true });
console.log(JSON.stringify({ ceiling: ceil, scenarios: [a, b, c, d], diskAfterA, diskAfterC, diskAfterD, peakHeapBytes: mem.heapBytes, peakRssBytes: mem.rssBytes }));
