/**
 * The bun:sqlite reference for scenarios (a) and (b): the model of our store's work in bench/lib/sqlite-holdings.ts
 * (the same files, parsed by the same parser, per record the same reads and writes, one transaction per file with
 * its ledger row). Prints one JSON line.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from './lib/ingest-data.ts';
import { percentile } from './lib/measure.ts';
import { SqliteHoldings } from './lib/sqlite-holdings.ts';

const [dataDir, workDir] = process.argv.slice(2);
if (!dataDir || !workDir) throw new Error('usage: bun bench/ingest-sqlite.ts DATA_DIR WORK_DIR');
const manifest = JSON.parse(readFileSync(join(dataDir, 'manifest.json'), 'utf8')) as Manifest;

rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const db = new SqliteHoldings(join(workDir, 'holdings.sqlite'));

async function scenario(
  keys: string[],
): Promise<{ records: number; seconds: number; recordsPerSecond: number; p50Ms: number; p95Ms: number }> {
  const times: number[] = [];
  let records = 0;
  const t0 = performance.now();
  for (const key of keys) {
    const t = performance.now();
    records += await db.applyFile(join(dataDir, 'bucket'), key);
    times.push(performance.now() - t);
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    records,
    seconds,
    recordsPerSecond: records / seconds,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
  };
}

const a = await scenario(manifest.a);
const bytesPerHolding = db.bytesPerHolding();
const b = await scenario(manifest.b);
db.close();
rmSync(workDir, { recursive: true, force: true });
console.log(JSON.stringify({ a, b, bytesPerHolding }));
