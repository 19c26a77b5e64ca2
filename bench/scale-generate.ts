/**
 * Writes this worker's share of the scale benchmark's load and fresh files (bench/lib/scale-data.ts): the files
 * whose index modulo WORKERS is WORKER, each gzip NDJSON with its planned LastModified. One file in memory at a
 * time. Progress on stderr; prints `done` when finished.
 *   bun bench/scale-generate.ts BUCKET MILLIONS WORKER WORKERS
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scalePlan } from './lib/scale-data.ts';
import { recordLine } from './lib/scale-records.ts';

const [bucket, millions, worker, workers] = process.argv.slice(2);
if (!bucket || !millions || worker === undefined || !workers)
  throw new Error('usage: bun bench/scale-generate.ts BUCKET MILLIONS WORKER WORKERS');
const w = Number(worker);
const n = Number(workers);
const plan = scalePlan(Number(millions));
const files = [...plan.load, ...plan.fresh].filter((_, i) => i % n === w);
const made = new Set<string>();
let lastNote = performance.now();
files.forEach((f, i) => {
  const platform = f.key.slice(0, f.key.indexOf('/'));
  if (!made.has(platform)) {
    mkdirSync(join(bucket, platform), { recursive: true });
    made.add(platform);
  }
  const lines = new Array<string>(f.records);
  for (let j = 0; j < f.records; j++) lines[j] = recordLine(f.first + j, platform);
  const path = join(bucket, f.key);
  writeFileSync(path, Bun.gzipSync(Buffer.from(`${lines.join('\n')}\n`)));
  utimesSync(path, f.mtime, f.mtime);
  if (performance.now() - lastNote > 30_000) {
    console.error(`  generator ${w + 1}/${n}: ${i + 1} of ${files.length} files`);
    lastNote = performance.now();
  }
});
console.log('done');
