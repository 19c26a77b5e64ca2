/**
 * Operating it for real: three figures an operator meets, on a store of ~1M live holdings (the ingest benchmark's
 * deposits, parts (a) and (b): 120 files, applied with --ingest, plus the Retraction Watch sample imported; built
 * once and cached under .bench/operations-store-v1/, with a store of the first 11 files of (a), ~1/10 the size,
 * beside it). Every daemon here watches an empty bucket folder, so the cached stores are only read.
 *   1. Start: the single binary (bun scripts/build.ts, rebuilt when src/ or conf/ is newer) started three times on
 *      the 1M store; time from spawn to the daemon.started log line (it carries the URL: the config listens on
 *      port 0), and to the first 200 of GET /healthz (polled every 5 ms once the URL is known); the
 *      entitlement.index_built line (the index is read by a worker thread after the port opens; until it lands,
 *      entitlement lookups read the store). Target <= 1 s to /healthz 200.
 *   2. --dump (bun src/main.ts) of the 1M store and of the ~100k one, stdout to a file, each twice, under
 *      /usr/bin/time -v (installed if missing): lines/s (wall time of the whole command), max RSS, and the peak
 *      anonymous RSS (RssAnon in /proc/PID/status, polled every 10 ms: the JS heap and malloc, without the
 *      store's mapped file pages, which RSS counts too). Target >= 300k lines/s, memory not growing with the store.
 *   3. --backup of the 1M store while the daemon (bun src/main.ts) answers the Updates API under load: wrk on
 *      127.0.0.1, 2 threads, 50 connections, bodies of 100 DOIs (~5% with updates), as bench/updates-api.ts. A
 *      backup alone first (its duration, its size); then 7 rounds of: the load alone for 10 s, the load during a
 *      backup (under a second: a short window, hence many rounds, the median ratio shown). Each rate is the
 *      daemon's count of 200 answers (its /metrics) over the window (10 s, or the backup command's spawn to exit);
 *      wrk runs from 1 s before the window to its end (stopped by SIGINT). Target >= 0.7. The command runs at nice
 *      19 by itself (src/cli/background-priority.ts), as an operator runs it.
 * The machine has 2 cores, which wrk, the daemon and the backup share. Figures are printed, never asserted.
 *   bun bench/operations.ts
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLE_PATH } from '../test/support/rw-sample.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import { BENCH_DIR, ingestData, REPO } from './lib/ingest-data.ts';
import { fmt } from './lib/measure.ts';
import { indexesRead, runBench, startProcess, stopAll } from './lib/processes.ts';
import { ensureWrk, sh } from './lib/shell.ts';
import { answered, bodies, doiPools, startWrk, stopLoads, wrk, wrkScript } from './lib/updates-load.ts';

const KEY = 'bench-key-0123456789';
const CACHE = join(BENCH_DIR, 'operations-store-v1');
const WORK = join(BENCH_DIR, 'operations-work');
const BINARY = join(BENCH_DIR, 'operations-bin', 'doi-holdings');
const BUN = process.execPath;
const MAIN = join(REPO, 'src/main.ts');
const STARTS = 3;
const DUMPS = 2;
const ROUNDS = 7;
const ALONE_MS = 10_000;

interface Stats {
  holdings: { total: number };
  store: { fileBytes: number };
}

async function cli(args: string[], what: string, okCodes = [0]): Promise<string> {
  const r = await sh([BUN, MAIN, ...args]);
  if (!okCodes.includes(r.code)) throw new Error(`${what} failed (exit ${r.code}): ${r.out.slice(-2000)}`);
  return r.out;
}

const stats = async (config: string) =>
  JSON.parse(
    (await cli(['--stats', '--env', 'production', '--config', config], '--stats')).trim().split('\n').pop()!,
  ) as Stats;

/** A cached store of the given deposit files (built when missing, or when --stats cannot read it). */
async function cachedStore(
  name: string,
  files: string[],
  withUpdates: boolean,
): Promise<{ config: string; stats: Stats }> {
  const dir = join(CACHE, name);
  const config = join(dir, 'config.toml');
  if (existsSync(join(dir, 'ready'))) {
    const s = await stats(config).catch(() => undefined);
    if (s) return { config, stats: s };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'bucket'), { recursive: true });
  writeDaemonConfig(config, {
    mapSizeGiB: 16,
    bucket: 'bucket',
    platforms: PLATFORM_NAMES.map((n) => ({ name: n })),
    apiKey: KEY,
    updates: true,
  });
  console.log(
    `building the ${name} store: --ingest of ${files.length} deposit files${withUpdates ? ' and --import-updates of the Retraction Watch sample' : ''} ...`,
  );
  const t = performance.now();
  await cli(['--ingest', ...files, '--config', config], '--ingest');
  if (withUpdates) await cli(['--import-updates', SAMPLE_PATH, '--config', config], '--import-updates', [0, 1]);
  console.log(`  built in ${fmt((performance.now() - t) / 1000, 1)} s`);
  writeFileSync(join(dir, 'ready'), '');
  return { config, stats: await stats(config) };
}

async function ensureBinary(): Promise<void> {
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs > Math.max(newest(join(REPO, 'src')), newest(join(REPO, 'conf'))))
    return;
  console.log('building the single binary ...');
  rmSync(BINARY, { force: true });
  const r = await sh([BUN, join(REPO, 'scripts/build.ts'), BINARY]);
  if (r.code !== 0) throw new Error(`build failed: ${r.out.slice(-2000)}`);
}

const spawned = new Set<ReturnType<typeof Bun.spawn>>();

/** One start of the binary: ms to daemon.started, to the first /healthz 200 and to the index build's line (polled every 5 ms). */
async function timedStart(
  config: string,
): Promise<{ startedMs: number; healthyMs: number; completeMs: number; indexMs: number; indexDois: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn([BINARY, '--config', config], { cwd: REPO, stdout: 'ignore', stderr: 'pipe' });
  spawned.add(proc);
  try {
    let out = '';
    let startedMs = 0;
    const decoder = new TextDecoder();
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the binary did not start in 60 s: ${out.slice(-2000)}`)),
        60_000,
      );
      void (async () => {
        for await (const c of proc.stderr) {
          out += decoder.decode(c);
          const m = /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(out);
          if (m && !startedMs) {
            startedMs = performance.now() - t0;
            clearTimeout(timer);
            resolve(m[1]!);
          }
        }
        reject(new Error(`the binary exited (${await proc.exited}): ${out.slice(-2000)}`));
      })();
    });
    let healthyMs = 0;
    while (!healthyMs) {
      const status = await fetch(`${url}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) healthyMs = performance.now() - t0;
      else await Bun.sleep(5);
    }
    // the index is read by a worker thread after the port opens (lookups read the store until it lands)
    const built = /^.*"event":"entitlement\.index_built".*$/m;
    while (!built.test(out)) await Bun.sleep(5);
    const completeMs = performance.now() - t0;
    const index = JSON.parse(built.exec(out)![0]) as { ms: number; dois: number };
    return { startedMs, healthyMs, completeMs, indexMs: index.ms, indexDois: index.dois };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    spawned.delete(proc);
  }
}

/** One --dump under /usr/bin/time -v, stdout to a file; the bun process's RssAnon/RssFile polled every 10 ms. */
async function timedDump(config: string): Promise<{
  lines: number;
  bytes: number;
  seconds: number;
  maxRssKb: number;
  peakAnonKb: number;
  peakFileKb: number;
}> {
  const outFile = join(WORK, 'dump.jsonl');
  const timeFile = join(WORK, 'time.txt');
  const t0 = performance.now();
  const proc = Bun.spawn(['/usr/bin/time', '-v', '-o', timeFile, BUN, MAIN, '--dump', '--config', config], {
    cwd: REPO,
    stdout: Bun.file(outFile),
    stderr: 'pipe',
  });
  spawned.add(proc);
  let peakAnonKb = 0;
  let peakFileKb = 0;
  let child = '';
  const kb = (status: string, field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  const poll = setInterval(() => {
    try {
      child ||= readFileSync(`/proc/${proc.pid}/task/${proc.pid}/children`, 'utf8').trim().split(' ')[0] ?? '';
      if (!child) return;
      const status = readFileSync(`/proc/${child}/status`, 'utf8');
      peakAnonKb = Math.max(peakAnonKb, kb(status, 'RssAnon'));
      peakFileKb = Math.max(peakFileKb, kb(status, 'RssFile'));
    } catch {
      // not started yet, or gone
    }
  }, 10);
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(poll);
  spawned.delete(proc);
  if (code !== 0) throw new Error(`--dump failed (exit ${code}): ${err.slice(-2000)}`);
  const lines = Number((await sh(['wc', '-l', outFile])).out.trim().split(' ')[0]);
  const bytes = statSync(outFile).size;
  rmSync(outFile);
  const maxRssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(readFileSync(timeFile, 'utf8'))?.[1]);
  return { lines, bytes, seconds, maxRssKb, peakAnonKb, peakFileKb };
}

let backups = 0;
/** One --backup of the 1M store into a new folder (removed after each measured window: the removal is not in it). */
async function backup(
  config: string,
): Promise<{ bytes: number; sourceBytes: number; liveHoldings: number; seconds: number; wallMs: number }> {
  const dir = join(WORK, `backup-${++backups}`);
  const t = performance.now();
  const out = await cli(['--backup', dir, '--config', config, '--env', 'production'], '--backup');
  const wallMs = performance.now() - t;
  return {
    ...(JSON.parse(out.trim().split('\n').pop()!) as {
      bytes: number;
      sourceBytes: number;
      liveHoldings: number;
      seconds: number;
    }),
    wallMs,
  };
}

const median = (xs: number[]) => {
  const o = [...xs].sort((a, b) => a - b);
  return o.length % 2 ? o[o.length >> 1]! : (o[o.length / 2 - 1]! + o[o.length / 2]!) / 2;
};
const mb = (bytes: number) => `${fmt(bytes / 1e6, 1)} MB`;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

async function main(): Promise<void> {
  await ensureWrk();
  if (!existsSync('/usr/bin/time')) {
    console.log('installing time from Debian packages ...');
    const r = await sh([
      'sh',
      '-c',
      'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time',
    ]);
    if (r.code !== 0) throw new Error(`cannot install time: ${r.out.slice(-500)}`);
  }
  const { dir: data, manifest } = await ingestData();
  const path = (key: string) => join(data, 'bucket', key);
  const big = await cachedStore('1m', [...manifest.a, ...manifest.b].map(path), true);
  const small = await cachedStore('100k', manifest.a.slice(0, 11).map(path), false);
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });

  // 1. the binary's start
  await ensureBinary();
  console.log(`1. starting the binary ${STARTS} times on the 1M store ...`);
  const starts = [];
  for (let i = 0; i < STARTS; i++) starts.push(await timedStart(big.config));

  // 2. --dump
  console.log(`2. --dump of each store, ${DUMPS} times ...`);
  const dumps = {
    '1m': [] as Awaited<ReturnType<typeof timedDump>>[],
    '100k': [] as Awaited<ReturnType<typeof timedDump>>[],
  };
  for (let i = 0; i < DUMPS; i++)
    for (const [name, s] of [
      ['100k', small],
      ['1m', big],
    ] as const)
      dumps[name].push(await timedDump(s.config));

  // 3. --backup under Updates API load
  console.log('3. a backup alone, then the daemon: the Updates API load alone and during a backup, in turns ...');
  const alone0 = await backup(big.config);
  rmSync(join(WORK, `backup-${backups}`), { recursive: true, force: true });
  const daemon = await startProcess([BUN, MAIN, '--config', big.config], (out) => /"url":"([^"]+)"/.exec(out)?.[1]);
  await indexesRead(daemon);
  const api = `${daemon.url}/v2.2/updates`;
  const pools = await doiPools(join(data, 'bucket'), manifest.a.slice(0, 30));
  const list = bodies(100, 300, pools);
  const probe = (await (
    await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: list[0],
    })
  ).json()) as {
    documents: { statusCode: number; updates: unknown[] }[];
  };
  const script = wrkScript(join(WORK, 'updates-100.lua'), list, KEY);
  await wrk(api, script, '3s'); // warm-up
  const windowed = async (during: () => Promise<void>) => {
    const load = startWrk(api, script);
    await Bun.sleep(1000);
    const count = async () => {
      // the count at the midpoint of its /metrics request
      const t = performance.now();
      return [await answered(daemon.url, '/v2.2/updates'), (t + performance.now()) / 2] as const;
    };
    const [c0, t0] = await count();
    await during();
    const [c1, t1] = await count();
    if (c1 <= c0)
      throw new Error(
        '/metrics counted no 200 answers on /v2.2/updates during a window (doi_holdings_http_requests_total)',
      );
    return { rps: (c1 - c0) / ((t1 - t0) / 1000), wrk: await load.stop() };
  };
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const alone = await windowed(() => Bun.sleep(ALONE_MS));
    let b: Awaited<ReturnType<typeof backup>> | undefined;
    const during = await windowed(async () => void (b = await backup(big.config)));
    rounds.push({ alone, during, backup: b! });
    rmSync(join(WORK, `backup-${backups}`), { recursive: true, force: true });
  }
  const sourceIndex = /"event":"entitlement\.index_built".*?"ms":(\d+)/.exec(daemon.output())?.[1];
  await stopAll();

  const s = (ms: number) => `${fmt(ms / 1000, 2)} s`;
  const bin = statSync(BINARY).size;
  const healthy = median(starts.map((x) => x.healthyMs));
  console.log(
    `\nOperating it for real: 1M store ${fmt(big.stats.holdings.total)} live holdings, file ${mb(big.stats.store.fileBytes)}; small store ${fmt(small.stats.holdings.total)} live holdings, file ${mb(small.stats.store.fileBytes)}; 2 cores shared by everything`,
  );
  console.log(
    `\n1. single binary ${BINARY.slice(REPO.length + 1)}: ${fmt(bin / 1048576, 1)} MiB (${mb(bin)}); spawn -> /healthz 200 on the 1M store, ${STARTS} starts:`,
  );
  console.log(
    '| start | spawn -> daemon.started | spawn -> /healthz 200 | spawn -> entitlement index complete | its build in the worker (log line) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: |');
  starts.forEach((x, i) =>
    console.log(
      `| ${i + 1} | ${fmt(x.startedMs)} ms | ${fmt(x.healthyMs)} ms | ${fmt(x.completeMs)} ms | ${fmt(x.indexMs)} ms (${fmt(x.indexDois)} DOIs) |`,
    ),
  );
  console.log(
    `median spawn -> /healthz 200: ${fmt(healthy)} ms (target <= 1,000 ms: ${met(healthy <= 1000)}); median spawn -> index complete ${fmt(median(starts.map((x) => x.completeMs)))} ms, entitlement lookups reading the store until then (the source daemon of part 3: build ${fmt(Number(sourceIndex))} ms)`,
  );

  console.log('\n2. --dump (bun src/main.ts), stdout to a file, under /usr/bin/time -v:');
  console.log(
    '| store | run | lines | MB out | seconds | lines/s | max RSS (time -v) | peak RssAnon (heap + malloc) | peak RssFile (mapped store and binary) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, runs] of Object.entries(dumps))
    runs.forEach((d, i) =>
      console.log(
        `| ${name} | ${i + 1} | ${fmt(d.lines)} | ${fmt(d.bytes / 1e6, 1)} | ${fmt(d.seconds, 2)} | ${fmt(d.lines / d.seconds)} | ${fmt(d.maxRssKb / 1024)} MiB | ${fmt(d.peakAnonKb / 1024)} MiB | ${fmt(d.peakFileKb / 1024)} MiB |`,
      ),
    );
  const bigRate = median(dumps['1m'].map((d) => d.lines / d.seconds));
  const perLine =
    (median(dumps['1m'].map((d) => d.seconds)) - median(dumps['100k'].map((d) => d.seconds))) /
    (big.stats.holdings.total - small.stats.holdings.total);
  const anon = (name: '1m' | '100k') => Math.max(...dumps[name].map((d) => d.peakAnonKb)) / 1024;
  const rss = (name: '1m' | '100k') => Math.max(...dumps[name].map((d) => d.maxRssKb)) / 1024;
  console.log(
    `1M dump: ${fmt(bigRate)} lines/s, the better run ${fmt(Math.max(...dumps['1m'].map((d) => d.lines / d.seconds)))} (target >= 300,000: ${met(bigRate >= 300_000)}); without the command's fixed cost (1M minus 100k) ${fmt(1 / perLine)} lines/s; peak RssAnon 1M ${fmt(anon('1m'))} MiB vs 100k ${fmt(anon('100k'))} MiB (x${fmt(anon('1m') / anon('100k'), 2)} for x${fmt(big.stats.holdings.total / small.stats.holdings.total, 1)} the holdings); max RSS ${fmt(rss('1m'))} vs ${fmt(rss('100k'))} MiB`,
  );

  console.log(
    `\n3. --backup of the 1M store (file ${mb(alone0.sourceBytes)}): alone ${fmt(alone0.seconds, 2)} s (wall ${s(alone0.wallMs)} with bun's start and the copy's check), backup ${mb(alone0.bytes)} = ${fmt(alone0.bytes / alone0.sourceBytes, 2)} of the store file, ${fmt(alone0.liveHoldings)} live holdings in the copy`,
  );
  console.log(
    `Updates API, 100-DOI bodies (probe: ${probe.documents.filter((d) => d.statusCode === 200).length} of 100 statusCode 200, ${probe.documents.filter((d) => d.updates.length > 0).length} with updates); wrk -t2 -c50:`,
  );
  console.log(
    '| round | alone: req/s (wrk p50, p99 ms, errors) | during the backup: req/s (wrk p50, p99 ms, errors) | backup s (wall) | backup size | ratio |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  const w = (l: { p50Ms: number; p99Ms: number; errors: number }) =>
    `${fmt(l.p50Ms, 1)}, ${fmt(l.p99Ms, 1)}, ${l.errors}`;
  rounds.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${fmt(r.alone.rps)} (${w(r.alone.wrk)}) | ${fmt(r.during.rps)} (${w(r.during.wrk)}) | ${fmt(r.backup.seconds, 2)} (${s(r.backup.wallMs)}) | ${mb(r.backup.bytes)} | ${fmt(r.during.rps / r.alone.rps, 2)} |`,
    ),
  );
  const ratio = median(rounds.map((r) => r.during.rps / r.alone.rps));
  const [alone, during] = [median(rounds.map((r) => r.alone.rps)), median(rounds.map((r) => r.during.rps))];
  console.log(
    `Updates API during a backup / alone: ${fmt(ratio, 3)} (the rounds' median ratio; target >= 0.70: ${met(ratio >= 0.7)}); median rates ${fmt(during)} / ${fmt(alone)} req/s = ${fmt(during / alone, 2)}; backup under load median ${fmt(median(rounds.map((r) => r.backup.seconds)), 2)} s (wall ${s(median(rounds.map((r) => r.backup.wallMs)))})`,
  );
}

const cleanup = async () => {
  await stopLoads();
  await stopAll();
  for (const p of [...spawned]) p.kill('SIGKILL');
  rmSync(WORK, { recursive: true, force: true });
};
await runBench(main, cleanup);
