/**
 * The scale benchmark's bun:sqlite reference (spawned by bench/scale.ts, so its heap and page cache are its own):
 * the first load of the same files in the same order, through the model of our store's work in
 * bench/lib/sqlite-holdings.ts, timed in steps of STEP_FILES files. A line per step on stderr; prints one JSON line.
 *   bun bench/scale-sqlite.ts BUCKET MANIFEST WORK_DIR STEP_FILES
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fmt } from './lib/measure.ts';
import type { ScaleManifest } from './lib/scale-data.ts';
import { SqliteHoldings } from './lib/sqlite-holdings.ts';

export interface SqliteScaleResult {
  steps: { files: number; records: number; seconds: number }[];
  bytesPerHolding: number;
}

const [bucket, manifestPath, workDir, stepFiles] = process.argv.slice(2);
if (!bucket || !manifestPath || !workDir || !stepFiles)
  throw new Error('usage: bun bench/scale-sqlite.ts BUCKET MANIFEST WORK_DIR STEP_FILES');
const { load } = JSON.parse(readFileSync(manifestPath, 'utf8')) as ScaleManifest;
const step = Number(stepFiles);

rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const db = new SqliteHoldings(join(workDir, 'holdings.sqlite'));
const steps: SqliteScaleResult['steps'] = [];
let total = 0;
for (let i = 0; i < load.length; i += step) {
  const keys = load.slice(i, i + step);
  let records = 0;
  const t0 = performance.now();
  for (const key of keys) records += await db.applyFile(bucket, key);
  const seconds = (performance.now() - t0) / 1000;
  steps.push({ files: keys.length, records, seconds });
  total += records;
  console.error(`  bun:sqlite: ${fmt(total)} records, this step ${fmt(records / seconds)} records/s`);
}
const result: SqliteScaleResult = { steps, bytesPerHolding: db.bytesPerHolding() };
db.close();
rmSync(workDir, { recursive: true, force: true });
console.log(JSON.stringify(result));
