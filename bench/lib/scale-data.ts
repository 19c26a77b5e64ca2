import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { prng } from './deposit-generator.ts';
import { BENCH_DIR, runBench } from './ingest-data.ts';
import { mix32, SCALE_PLATFORMS } from './scale-records.ts';

/**
 * The scale benchmark's deposits (issue 48), generated once into `.bench/scale-<N>M/bucket/` and reused while the
 * manifest's generator version matches. Three kinds of file, every one `<platform>/<uuid>.jsonl.gz` with a
 * LastModified one second after the previous file's, so the apply order is the order below:
 * - `load`: N million records (scale-records.ts), 10,000 a file, file i from platform i mod 20;
 * - `redeposit`: a byte-for-byte copy of every 10th load file under a new key (the content unchanged);
 * - `fresh`: 9 files of 10,000 DOIs never deposited before (records N million onwards).
 * Which records a file holds, its key and its LastModified are functions of its index (scalePlan), so generator
 * processes share the work without talking, and nothing grows with N but the list of keys.
 */

export const SCALE_GENERATOR_VERSION = 1;
export const RECORDS_PER_FILE = 10_000;
export const FRESH_FILES = 9;
/** every REDEPOSIT_EVERY-th load file is deposited again */
const REDEPOSIT_EVERY = 10;
const FIRST_MTIME = Date.UTC(2026, 0, 5, 8, 0, 0) / 1000;

export interface PlannedFile {
  key: string;
  /** LastModified, seconds */
  mtime: number;
  /** records first, first + 1, ..., first + records - 1 (scale-records.ts) */
  first: number;
  records: number;
  /** a redeposit: the load file whose bytes it copies */
  copyOf?: string;
}

export interface ScalePlan {
  records: number;
  load: PlannedFile[];
  redeposit: PlannedFile[];
  fresh: PlannedFile[];
}

export interface ScaleManifest {
  version: number;
  millions: number;
  records: number;
  recordsPerFile: number;
  load: string[];
  redeposit: string[];
  fresh: string[];
  /** the bucket's bytes on disk, and how long generating took */
  bytes: number;
  generatedSeconds: number;
}

/** A deterministic v4-shaped UUID per (kind, index): distinct seeds (mix32 is a bijection), distinct names. */
function uuidOf(kind: number, index: number): string {
  const rand = prng(mix32(index * 3 + kind));
  const h = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16));
  h[12] = '4';
  h[16] = '89ab'[Math.floor(rand() * 4)]!;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

export function scalePlan(millions: number): ScalePlan {
  const records = Math.round(millions * 1_000_000);
  const files = Math.ceil(records / RECORDS_PER_FILE);
  const keyOf = (kind: number, index: number, platform: string) => `${platform}/${uuidOf(kind, index)}.jsonl.gz`;
  const load = Array.from({ length: files }, (_, i) => ({
    key: keyOf(0, i, SCALE_PLATFORMS[i % SCALE_PLATFORMS.length]!),
    mtime: FIRST_MTIME + i,
    first: i * RECORDS_PER_FILE,
    records: Math.min(RECORDS_PER_FILE, records - i * RECORDS_PER_FILE),
  }));
  const sources = load.filter(
    (_, i) => i % REDEPOSIT_EVERY === REDEPOSIT_EVERY >> 1 || (files < REDEPOSIT_EVERY && i === 0),
  );
  const redeposit = sources.map((f, j) => ({
    ...f,
    key: keyOf(1, j, f.key.slice(0, f.key.indexOf('/'))),
    mtime: FIRST_MTIME + files + j,
    copyOf: f.key,
  }));
  const fresh = Array.from({ length: FRESH_FILES }, (_, k) => ({
    key: keyOf(2, k, SCALE_PLATFORMS[(files + k) % SCALE_PLATFORMS.length]!),
    mtime: FIRST_MTIME + files + redeposit.length + k,
    first: records + k * RECORDS_PER_FILE,
    records: RECORDS_PER_FILE,
  }));
  return { records, load, redeposit, fresh };
}

/** The cached data set of `millions` million records: generated when missing or of another generator version. */
export async function scaleData(millions: number): Promise<{ dir: string; bucket: string; manifest: ScaleManifest }> {
  const dir = join(BENCH_DIR, `scale-${millions}M`);
  const bucket = join(dir, 'bucket');
  const manifestPath = join(dir, 'manifest.json');
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ScaleManifest;
    if (manifest.version === SCALE_GENERATOR_VERSION && manifest.millions === millions)
      return { dir, bucket, manifest };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(bucket, { recursive: true });
  const plan = scalePlan(millions);
  const workers = Math.max(1, Math.min(navigator.hardwareConcurrency, 4));
  console.log(
    `generating ${plan.load.length + plan.fresh.length} deposit files (${workers} processes) and ${plan.redeposit.length} re-deposits into ${dir} ...`,
  );
  const t = performance.now();
  await Promise.all(
    Array.from({ length: workers }, (_, w) =>
      runBench('scale-generate.ts', bucket, String(millions), String(w), String(workers)),
    ),
  );
  for (const f of plan.redeposit) {
    const to = join(bucket, f.key);
    mkdirSync(join(to, '..'), { recursive: true });
    copyFileSync(join(bucket, f.copyOf!), to);
    utimesSync(to, f.mtime, f.mtime);
  }
  const keys = (files: PlannedFile[]) => files.map((f) => f.key);
  const manifest: ScaleManifest = {
    version: SCALE_GENERATOR_VERSION,
    millions,
    records: plan.records,
    recordsPerFile: RECORDS_PER_FILE,
    load: keys(plan.load),
    redeposit: keys(plan.redeposit),
    fresh: keys(plan.fresh),
    bytes: folderBytes(bucket),
    generatedSeconds: (performance.now() - t) / 1000,
  };
  writeFileSync(manifestPath, JSON.stringify(manifest));
  return { dir, bucket, manifest };
}

function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true }))
    n += e.isDirectory() ? folderBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

/** A bucket folder at `to` holding hard links to `keys` of `from` (same bytes and LastModified, no copy). */
export function linkBucket(from: string, to: string, keys: readonly string[]): void {
  for (const key of keys) {
    const target = join(to, key);
    mkdirSync(join(target, '..'), { recursive: true });
    linkSync(join(from, key), target);
  }
}
