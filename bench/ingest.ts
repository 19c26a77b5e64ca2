/**
 * Ingest benchmark (issue 10): prints records/s and per-file p50/p95 for
 *   (a) initial load 0 -> 1M, (b) churn at 1M, (c) unchanged re-deposit at 1M, (d) cold catch-up on 120 files,
 * bytes on disk per holding, peak JS heap and RSS, and in the same run two references: the ceiling
 * (read + gunzip + parse + validate, no store) and bun:sqlite doing the same work.
 * Each part runs in its own process so one's heap and page cache state do not pollute another's figures.
 *   bun bench/ingest.ts            (deposits are generated once into .bench/ingest-data-v<N>/)
 */
import { join } from 'node:path';
import type { ScenarioResult } from './ingest-lmdb.ts';
import { BENCH_DIR as BENCH, ingestData, runBench as run } from './lib/ingest-data.ts';
import { fmt, mib } from './lib/measure.ts';

const { dir: data } = await ingestData();

type Scenario = ScenarioResult;
console.log('LMDB store (the real Ingestor, bucket folder -> LMDB file) ...');
const lmdb = JSON.parse(await run('ingest-lmdb.ts', data, join(BENCH, 'ingest-work-lmdb'))) as {
  ceiling: { recordsPerSecond: number };
  oneByOne: Record<'a' | 'b' | 'c', Scenario>;
  queued: Record<'a' | 'b' | 'c' | 'd', Scenario>;
  diskAfterA: { holdings: number; live: number; usedBytes: number; allocatedBytes: number; holdingsTreeBytes: number };
  diskAfterD: { holdings: number; live: number; usedBytes: number; allocatedBytes: number; holdingsTreeBytes: number };
  peakHeapBytes: number;
  peakRssBytes: number;
};
console.log('bun:sqlite reference ...');
const sqlite = JSON.parse(await run('ingest-sqlite.ts', data, join(BENCH, 'ingest-work-sqlite'))) as {
  a: Scenario;
  b: Scenario;
  bytesPerHolding: number;
};

const TARGETS = { a: 150_000, b: 75_000, c: 300_000, d: 120_000 };
const NAMES = {
  a: '(a) initial load, 0 -> 1M',
  b: '(b) churn at 1M (30% changed, 3% removed)',
  c: '(c) unchanged re-deposit at 1M',
  d: '(d) cold catch-up, 120 files',
};
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const line = (s: Scenario) => [fmt(s.recordsPerSecond), fmt(s.p50Ms, 1), fmt(s.p95Ms, 1)];

console.log(
  `\nrecords per file: 10,000; files (a) ${lmdb.queued.a.files}, (b) ${lmdb.queued.b.files}, (c) ${lmdb.queued.c.files}, (d) ${lmdb.queued.d.files}`,
);
console.log('\nFiles arriving one at a time (a running daemon; per-file ms = read + parse + apply + commit):');
console.log(row(['scenario', 'records/s', 'p50 ms/file', 'p95 ms/file', 'target rec/s']));
console.log(row(['---', '---:', '---:', '---:', '---:']));
for (const k of ['a', 'b', 'c'] as const) console.log(row([NAMES[k], ...line(lmdb.oneByOne[k]), fmt(TARGETS[k])]));
console.log("\nEach scenario's files queued together (a burst of uploads, or a daemon starting on a full bucket): the");
console.log('worker parses the next files while the main thread applies them 2 per transaction. ms/file = wall time');
console.log("divided by files; apply p50/p95 = the main thread's time per file inside the transaction:");
console.log(row(['scenario', 'records/s', 'ms/file', 'apply p50 ms', 'apply p95 ms', 'target rec/s']));
console.log(row(['---', '---:', '---:', '---:', '---:', '---:']));
for (const k of ['a', 'b', 'c', 'd'] as const) {
  const s = lmdb.queued[k];
  console.log(
    row([
      NAMES[k],
      fmt(s.recordsPerSecond),
      fmt((s.seconds * 1000) / s.files, 1),
      fmt(s.p50Ms, 1),
      fmt(s.p95Ms, 1),
      fmt(TARGETS[k]),
    ]),
  );
}

console.log('\nReferences, same run:');
console.log(`- ceiling (read + gunzip + parse + validate, no store): ${fmt(lmdb.ceiling.recordsPerSecond)} records/s`);
console.log(
  row([
    'bun:sqlite, one file per transaction',
    'records/s',
    'p50 ms/file',
    'p95 ms/file',
    'LMDB one at a time / sqlite',
    'LMDB queued / sqlite',
  ]),
);
console.log(row(['---', '---:', '---:', '---:', '---:', '---:']));
for (const k of ['a', 'b'] as const)
  console.log(
    row([
      NAMES[k],
      ...line(sqlite[k]),
      `${fmt(lmdb.oneByOne[k].recordsPerSecond / sqlite[k].recordsPerSecond, 2)}x`,
      `${fmt(lmdb.queued[k].recordsPerSecond / sqlite[k].recordsPerSecond, 2)}x`,
    ]),
  );

const A = lmdb.diskAfterA;
const D = lmdb.diskAfterD;
console.log('\nDisk (LMDB file, used pages):');
console.log(
  `- after (a): ${fmt(A.holdings)} holdings (${fmt(A.live)} live), each with one event: ${fmt(A.usedBytes / A.holdings, 0)} bytes/holding (holdings tree alone ${fmt(A.holdingsTreeBytes / A.holdings, 0)}; target <= 250)`,
);
console.log(
  `- after (d): ${fmt(D.holdings)} holdings, a fresh store built from (a)+(b): ${fmt(D.usedBytes / D.holdings, 0)} bytes/holding`,
);
console.log(`- bun:sqlite after (a): ${fmt(sqlite.bytesPerHolding, 0)} bytes/holding`);
console.log(
  `\nPeak JS heap while ingesting: ${mib(lmdb.peakHeapBytes)} (target <= 256 MiB); peak RSS ${mib(lmdb.peakRssBytes)} (includes the LMDB map's resident pages)`,
);
