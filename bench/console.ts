/**
 * The operator console at scale (issue 52, item 1's figure): `make bench-console`. The console page's time
 * (GET /console on the daemon's `server.adminListen`, from request to the last byte, one request at a time) on a
 * store of SCALE_MILLIONS million holdings (default 20), at rest and while wrk loads the Updates API (bench/lib/
 * updates-load.ts: 2 threads, 50 connections, bodies of 100 DOIs, ~5% with updates) on the public listener.
 * Target (the issue): <= 50 ms p99 under that load. Printed, never asserted.
 *   - the data: the scale benchmark's deposit files (bench/lib/scale-data.ts: 10,000 records a file, 20 platforms),
 *     its first SCALE_MILLIONS x 100 files; SCALE_DATA names a data folder made before (e.g. another checkout's
 *     .bench/scale-20M), read only: its files are copied into the store folder's bucket. Without it, the data set
 *     of SCALE_MILLIONS million is generated into .bench/ (as `make bench-scale` does);
 *   - the load: one `--ingest` of every file (a sorted pass), the Retraction Watch sample imported;
 *   - the daemon started, its indexes read; the console's first view (it counts the files applied per day from the
 *     ledger's apply numbers once: every file of the load is of today), then VIEWS views at rest and VIEWS under load.
 * The 2 cores are shared by the daemon, wrk and this process, as in the other benchmarks.
 *   SCALE_MILLIONS=2 SCALE_DATA=.bench/scale-20M bun bench/console.ts
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SAMPLE_PATH } from '../test/support/rw-sample.ts';
import { ingest, runCli } from './lib/cli.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt, percentile } from './lib/measure.ts';
import { indexesRead, runBench, startProcess, stopAll } from './lib/processes.ts';
import { RECORDS_PER_FILE, type ScaleManifest, scaleData } from './lib/scale-data.ts';
import { SCALE_PLATFORMS } from './lib/scale-records.ts';
import { ensureWrk } from './lib/shell.ts';
import { bodies, doiPools, startWrk, stopLoads, wrkScript } from './lib/updates-load.ts';

const MILLIONS = Number(process.env.SCALE_MILLIONS ?? 20);
const VIEWS = 300;
const TARGET_P99_MS = 50;
const UPDATES_KEY = 'bench-updates-key-0123456789';
/** files whose DOIs the Updates API load asks about (their lines are read into memory here) */
const POOL_FILES = 20;
/** the store folder, removed at the end (20M holdings are about 2.3 GB) */
const WORK = join(REPO, '.scratch', `console-bench-${process.pid}`);

async function main(): Promise<void> {
  await ensureWrk();
  const data = process.env.SCALE_DATA
    ? { dir: process.env.SCALE_DATA, manifest: readManifest(process.env.SCALE_DATA) }
    : await scaleData(MILLIONS);
  const files = Math.round((MILLIONS * 1e6) / RECORDS_PER_FILE);
  const keys = data.manifest.load.slice(0, files);
  if (keys.length < files) throw new Error(`${data.dir} holds ${data.manifest.load.length} files, not ${files}`);
  const work = WORK;
  const bucket = join(work, 'bucket');
  for (const key of keys) {
    mkdirSync(dirname(join(bucket, key)), { recursive: true });
    copyFileSync(join(data.dir, 'bucket', key), join(bucket, key));
  }
  const config = join(work, 'config.toml');
  writeDaemonConfig(config, {
    mapSizeGiB: Math.max(4, Math.ceil(MILLIONS * 0.6)),
    bucket: 'bucket',
    platforms: SCALE_PLATFORMS.map((name) => ({ name })),
    apiKey: UPDATES_KEY,
    updates: true,
  });
  // the operator's listener beside the public one
  const text = readFileSync(config, 'utf8').replace(
    'listen = "127.0.0.1:0"',
    'listen = "127.0.0.1:0"\nadminListen = "127.0.0.1:0"',
  );
  await Bun.write(config, text);

  console.log(`console benchmark: ${fmt(keys.length * RECORDS_PER_FILE)} holdings (${keys.length} files) in ${work}`);
  const load = await ingest(
    config,
    keys.map((k) => join(bucket, k)),
  );
  console.log(`  loaded by one --ingest in ${fmt(load.ms / 1000, 1)} s (${fmt(load.counts.added)} holdings added)`);
  const imported = await runCli(config, ['--import-updates', SAMPLE_PATH]);
  if (imported.code !== 0) throw new Error(`--import-updates failed: ${imported.stderr.slice(-1000)}`);

  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(out)?.[1],
  );
  const consoleUrl = /"event":"daemon\.console_listening".*?"url":"([^"]+)"/.exec(daemon.output())?.[1];
  if (!consoleUrl) throw new Error(`no console listener in the daemon's log: ${daemon.output().slice(-2000)}`);
  await indexesRead(daemon);

  const first = await view(consoleUrl);
  console.log(`  first view: ${fmt(first.ms, 1)} ms, ${fmt(first.bytes)} bytes (counts today's files once)`);
  const rest = await views(consoleUrl);
  report('at rest', rest);

  const pools = await doiPools(bucket, keys.slice(0, POOL_FILES));
  const script = wrkScript(join(work, 'updates.lua'), bodies(100, 300, pools), UPDATES_KEY);
  const wrk = startWrk(`${daemon.url}/v2.2/updates`, script);
  // the load runs before the first timed view: the daemon is under it from the start
  await Bun.sleep(2000);
  const loaded = await views(consoleUrl);
  const updates = await wrk.stop();
  report('Updates API under load', loaded);
  console.log(
    `  the Updates API meanwhile: ${fmt(updates.rps)} req/s, p50 ${fmt(updates.p50Ms, 1)} ms, ` +
      `p99 ${fmt(updates.p99Ms, 1)} ms, ${updates.errors} errors`,
  );
  const p99 = percentile(loaded, 99);
  console.log(
    `  target: p99 <= ${TARGET_P99_MS} ms under load: ${fmt(p99, 1)} ms, ${p99 <= TARGET_P99_MS ? 'met' : 'NOT met'}`,
  );
}

function readManifest(dir: string): ScaleManifest {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ScaleManifest;
}

async function view(url: string): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const r = await fetch(url);
  const body = await r.arrayBuffer();
  const ms = performance.now() - t;
  if (r.status !== 200) throw new Error(`GET /console: ${r.status}`);
  return { ms, bytes: body.byteLength };
}

async function views(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < VIEWS; i++) times.push((await view(url)).ms);
  return times;
}

function report(what: string, times: number[]): void {
  console.log(
    `  ${what}: ${times.length} views, p50 ${fmt(percentile(times, 50), 1)} ms, ` +
      `p99 ${fmt(percentile(times, 99), 1)} ms, max ${fmt(Math.max(...times), 1)} ms`,
  );
}

await runBench(main, async () => {
  await stopLoads();
  await stopAll();
  rmSync(WORK, { recursive: true, force: true });
});
