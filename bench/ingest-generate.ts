/**
 * Writes the ingest benchmark's deposits once (they are cached under .bench/): scenario (a) 100 initial files,
 * (b) 20 churn files, both into `bucket/`, and (c) 20 unchanged re-deposits into `bucket-c/`. Each file gets a
 * LastModified one second after the previous one, so the apply order is the generation order.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DepositGenerator, prng } from './lib/deposit-generator.ts';

import { GENERATOR_VERSION, type Manifest } from './lib/ingest-data.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: bun bench/ingest-generate.ts DIR');
const FILES_A = 100;
const FILES_B = 20;
const FILES_C = 20;
const RECORDS = 10_000;

const gen = new DepositGenerator();
const uuidRand = prng(7);
const uuid = () => {
  const h = Array.from({ length: 32 }, () => Math.floor(uuidRand() * 16).toString(16));
  h[12] = '4';
  h[16] = '89ab'[Math.floor(uuidRand() * 4)]!;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
};
let mtime = Date.UTC(2026, 0, 5, 8, 0, 0) / 1000;
const write = (bucket: string, d: { platform: string; lines: string[] }): string => {
  const key = `${d.platform}/${uuid()}.jsonl.gz`;
  const path = join(dir, bucket, key);
  mkdirSync(join(dir, bucket, d.platform), { recursive: true });
  writeFileSync(path, Bun.gzipSync(Buffer.from(`${d.lines.join('\n')}\n`)));
  mtime += 1;
  utimesSync(path, mtime, mtime);
  return key;
};

const manifest: Manifest = { version: GENERATOR_VERSION, recordsPerFile: RECORDS, a: [], b: [], c: [] };
for (let i = 0; i < FILES_A; i++) manifest.a.push(write('bucket', gen.initialFile(i, RECORDS)));
for (let i = 0; i < FILES_B; i++) manifest.b.push(write('bucket', gen.churnFile(i, RECORDS)));
for (let i = 0; i < FILES_C; i++) manifest.c.push(write('bucket-c', gen.unchangedFile(i, RECORDS)));
writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
console.error(`generated ${FILES_A + FILES_B + FILES_C} files into ${dir} (${gen.live.size} live DOIs at the end)`);
