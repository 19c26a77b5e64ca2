/**
 * Crossref harvester benchmark (issue 21), in one run, on copies of the ~1M-holding store of bench/operations.ts
 * (cached under .bench/operations-store-v1/1m; see bench/lib/million-store.ts). The fake Crossref REST API
 * (test/support/crossref-api.ts) serves 200,000 synthetic works (one update row each, indexed today) from its own
 * process (bench/crossref-server.ts), so its CPU and heap are not the harvester's.
 *   2. (run first) Retraction Watch import: the 65,000-row CSV of bench/updates-import.ts, --import-updates into
 *      copy A of the 1M store through the real CLI; rows/s. Copy B is then taken of A (1M holdings + 65k RW rows).
 *   1. Harvest: CrossrefHarvest.run() in this process (rows = 1000, two cursor passes, the window committed whole)
 *      into copy A, twice: the first harvest (full: a snapshot of the feed), then an incremental one of the same
 *      works (indexed today, where the first window ended) after the fake gave every update a new date, so that
 *      every one changes. Records/s; the time split (waiting on the server for a page and its body; the rest of
 *      paging: JSON parse, rows, scratch writes, progress saves; the commit); peak JS heap (heapUsed every 50 ms
 *      and after every page: the synchronous commit holds this thread, so a worker thread also polls RssAnon, the
 *      process's anonymous memory, every 20 ms); peak RSS (VmHWM, the store's mapped pages too); CPU of both
 *      processes. Targets: >= 20,000 records/s, heap <= 256 MB.
 *   3. Updates API under a harvest: the real daemon (bun src/main.ts) on copy B; wrk -t2 -c50, 100-DOI bodies
 *      (~5% with updates), as bench/operations.ts. ROUNDS rounds of: the load alone for 10 s; the load while the
 *      daemon harvests the 200,000 works (its [[updates.crossref]] written into the config, then SIGHUP: the
 *      daemon follows it at once, in a process of its own), from the signal to its harvest.window_committed line
 *      and on until the Updates API serves the harvest (a harvested work's answer changed: its index was read
 *      again); the load for 5 s after; the load while --harvest runs in another process on the same store (a
 *      config file of its own), from spawn to exit and on until the API serves it; 5 s after. Round 1 is each harvest's first
 *      (full), later rounds are incremental; before every harvest but the daemon's first, every update gets a new
 *      date. Each rate is the daemon's count of 200 answers (/metrics) over its window; wrk runs from 1 s before
 *      a window to its end; /healthz is polled one request after another for the longest pause. Target: during /
 *      alone >= 0.8. The CPU of each window, from /proc, in cores: the daemon's threads, niced processes (the
 *      daemon's harvest), the fake, system time, idle; and the daemon's requests per second of its own CPU.
 * The machine has 2 cores, which wrk, the daemon, the fake and the harvest share. Figures are printed, never asserted.
 *   bun bench/harvest.ts
 *   bun bench/harvest.ts --in-process    parts 2 and 1 only (about 30 s): for comparing builds in turns, where the
 *                                        full harvest's rate varies by about a quarter between runs of one build
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLogger, writeStderr } from '../src/base/log.ts';
import type { CrossrefHarvestSettings } from '../src/config/index.ts';
import { Store } from '../src/store/index.ts';
import { CrossrefHarvest, type WindowFigures } from '../src/updates/index.ts';
import { BENCH_DIR, ingestData, REPO } from './lib/ingest-data.ts';
import { fmt, PeakMemory } from './lib/measure.ts';
import { BENCH_KEY, copyStore, millionStore } from './lib/million-store.ts';
import { cpuSeconds, machineCpu, pauseProbe, rssAnonPeak, statusKb } from './lib/process-probes.ts';
import { indexesRead, runBench, type Started, startProcess, stopAll } from './lib/processes.ts';
import { writeRetractionWatchCsv } from './lib/rw-csv.ts';
import { ensureWrk, sh } from './lib/shell.ts';
import { answered, bodies, doiPools, type Load, startWrk, stopLoads, wrk, wrkScript } from './lib/updates-load.ts';

const WORKS = 200_000;
const ROWS = 1000;
const RW_ROWS = 65_000;
const ROUNDS = 4;
const ALONE_MS = 10_000;
const AFTER_MS = 5_000;
const MAILTO = 'bench@example.org';
/** one of the fake's works with an update (syntheticWorks: the odd ones) */
const PROBE_DOI = '10.5555/harvest.1';
const WORK = join(BENCH_DIR, 'harvest-work');
const BUN = process.execPath;
const MAIN = join(REPO, 'src/main.ts');

let changes = 0;
/** Every update the fake serves gets a new date (bench/crossref-server.ts, SIGUSR1): the next harvest changes them all. */
async function changeWorks(fake: Started): Promise<void> {
  const done = `changed ${++changes}\n`;
  fake.signal('SIGUSR1');
  while (!fake.output().includes(done)) await Bun.sleep(20);
}

const MB = (bytes: number) => `${fmt(bytes / 1048576, 0)} MiB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

interface Harvested {
  result: WindowFigures;
  ms: number;
  fetchMs: number;
  bytes: number;
  commitMs: number;
  pagingHeap: number;
  heapBefore: number;
  mem: PeakMemory;
  anonKb: number;
  hwmKb: number;
  rssBefore: number;
  anonBefore: number;
  cpuS: number;
  serverCpu: number;
}

/** 1. One CrossrefHarvest.run() in this process, into the store at `dir` (the first is full, the next incremental). */
async function harvestHere(dir: string, server: Started): Promise<Harvested> {
  const store = Store.open(join(dir, 'db'), 'production', { mapSizeBytes: 16 * 2 ** 30 });
  const settings: CrossrefHarvestSettings = {
    name: 'bench',
    url: server.url,
    mailto: MAILTO,
    everyMs: 86_400_000,
    rows: ROWS,
    fullEveryMs: 0,
    staleAfterMs: 3 * 86_400_000,
    nice: 0,
    idle: false,
  };
  let fetchMs = 0;
  let bytes = 0;
  const timedFetch = (async (...args: Parameters<typeof fetch>) => {
    const t = performance.now();
    const r = await fetch(...args);
    const body = await r.arrayBuffer();
    fetchMs += performance.now() - t;
    bytes += body.byteLength;
    return new Response(body, { status: r.status, headers: r.headers });
  }) as typeof fetch;
  const harvest = new CrossrefHarvest(settings, [store], jsonLogger(writeStderr, 'warn'), {
    version: 'bench',
    fetch: timedFetch,
  });
  Bun.gc(true);
  const heapBefore = process.memoryUsage().heapUsed;
  const [rssBefore, anonBefore] = [statusKb('VmRSS'), statusKb('RssAnon')];
  writeFileSync('/proc/self/clear_refs', '5'); // VmHWM starts again from the current RSS
  const anon = rssAnonPeak();
  const mem = new PeakMemory(50);
  let lastPageAt = 0;
  let pagingHeap = 0;
  const [cpu0, server0] = [process.cpuUsage(), cpuSeconds(server.pid)];
  const t0 = performance.now();
  const result = await harvest.run({
    onProgress: () => {
      lastPageAt = performance.now();
      mem.sample();
      pagingHeap = mem.heapBytes;
    },
  });
  const t1 = performance.now();
  mem.stop();
  const cpu = process.cpuUsage(cpu0);
  const serverCpu = cpuSeconds(server.pid) - server0;
  const anonKb = await anon.peakKb();
  anon.stop();
  const hwmKb = statusKb('VmHWM');
  await store.close();
  if ('code' in result) throw new Error(`the harvest failed: ${result.code}: ${result.message}`);
  return {
    result,
    ms: t1 - t0,
    fetchMs,
    bytes,
    commitMs: t1 - lastPageAt,
    pagingHeap,
    heapBefore,
    mem,
    anonKb,
    hwmKb,
    rssBefore,
    anonBefore,
    cpuS: (cpu.user + cpu.system) / 1e6,
    serverCpu,
  };
}

/** 2. --import-updates of the 65k-row CSV into the store of `config`. */
async function rwImport(config: string) {
  const csv = join(WORK, 'retraction-watch-65k.csv');
  const bytes = await writeRetractionWatchCsv(csv, RW_ROWS);
  const t = performance.now();
  const r = await sh([BUN, MAIN, '--import-updates', csv, '--config', config]);
  const wallS = (performance.now() - t) / 1000;
  if (r.code > 1) throw new Error(`--import-updates failed (${r.code}): ${r.out.slice(-2000)}`);
  const line = r.out.split('\n').find((l) => l.startsWith('{"') && l.includes('"rows"'));
  const report = JSON.parse(line!) as {
    rows: number;
    used: number;
    works: number;
    skipped: Record<string, number>;
    ms: number;
  };
  return { ...report, seconds: report.ms / 1000, bytes, wallS, code: r.code };
}

/** 3. The daemon on `b`, ROUNDS times: the Updates API rate alone, during its own harvest, after it, during --harvest, after it. */
async function apiUnderHarvest(b: ReturnType<typeof copyStore>, fake: Started, bucket: string, files: string[]) {
  const daemon = await startProcess(
    [BUN, MAIN, '--config', b.config],
    (out) => /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(out)?.[1],
  );
  await indexesRead(daemon);
  const api = `${daemon.url}/v2.2/updates`;
  const pools = await doiPools(bucket, files);
  const list = bodies(100, 300, pools);
  const script = wrkScript(join(WORK, 'updates-100.lua'), list, BENCH_KEY);
  const probe = (await (
    await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': BENCH_KEY },
      body: list[0],
    })
  ).json()) as {
    documents: { statusCode: number; updates: unknown[] }[];
  };
  await wrk(api, script, '3s'); // warm-up
  // a harvested work: every harvest changes its update's date, so its answer tells when the API serves the harvest
  const servedProbe = async () =>
    (
      await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': BENCH_KEY },
        body: JSON.stringify({ dois: [PROBE_DOI] }),
      })
    ).text();
  const windowed = async (during: () => Promise<number>, harvest = false) => {
    const load = startWrk(api, script);
    await Bun.sleep(1000);
    const count = async () => {
      const t = performance.now();
      return [await answered(daemon.url, '/v2.2/updates'), (t + performance.now()) / 2] as const;
    };
    const pauses = pauseProbe(daemon.url);
    const before = harvest ? await servedProbe() : '';
    const [c0, t0] = await count();
    const cpu0 = { m: machineCpu(), daemon: cpuSeconds(daemon.pid), fake: cpuSeconds(fake.pid) };
    const harvestMs = await during();
    // a harvest's window goes on until the Updates API serves what it committed (its index is read again)
    const ended = performance.now();
    while (harvest && (await servedProbe()) === before) {
      if (performance.now() - ended > 120_000)
        throw new Error(`the Updates API did not serve the harvest of ${PROBE_DOI} in 2 minutes`);
      await Bun.sleep(10);
    }
    const servedMs = performance.now() - ended;
    const [c1, t1] = await count();
    const m = machineCpu();
    const s = (t1 - t0) / 1000;
    // cores used in the window: the daemon's threads, niced processes (the daemon's harvest), the fake, idle, the rest (wrk, the kernel, ...)
    const cpu = {
      daemon: (cpuSeconds(daemon.pid) - cpu0.daemon) / s,
      niced: (m.nice - cpu0.m.nice) / s,
      fake: (cpuSeconds(fake.pid) - cpu0.fake) / s,
      idle: (m.idle - cpu0.m.idle) / s,
      system: (m.system - cpu0.m.system) / s,
    };
    const pauseMs = await pauses.stop();
    return { rps: (c1 - c0) / s, seconds: s, harvestMs, servedMs, pauseMs, cpu, wrk: await load.stop() };
  };
  // a new everyMinutes each time is a config change: the daemon's sources restart and the harvest runs at once
  const crossref = (name: string, i: number) =>
    `[[updates.crossref]]\nname = "${name}"\nurl = "${fake.url}"\nmailto = "${MAILTO}"\neveryMinutes = ${30_000 + i}\nrows = ${ROWS}\n`;
  let full: Record<string, boolean> = {};
  // the daemon's own harvest (SIGHUP); the window ends at its harvest.window_committed line
  const ownHarvest = async (i: number) => {
    b.writeConfig(crossref('daemon', i));
    const t = performance.now();
    const seen = daemon.output().length;
    daemon.signal('SIGHUP');
    const done = /^.*"event":"harvest\.(window_committed|failed)".*"harvest":"daemon".*$/m;
    let m: RegExpExecArray | null;
    while (!(m = done.exec(daemon.output().slice(seen)))) {
      if (performance.now() - t > 600_000)
        throw new Error(`the daemon's harvest did not end in 10 minutes: ${daemon.output().slice(-2000)}`);
      await Bun.sleep(50);
    }
    if (m[0].includes('"event":"harvest.failed"')) throw new Error(`the daemon's harvest failed: ${m[0]}`);
    const f = JSON.parse(m[0]) as WindowFigures;
    full.own = f.full;
    return f.ms;
  };
  // --harvest in another process on the same store (a config file of its own, naming another harvest); the window is its run
  const cliHarvest = async (i: number) => {
    const r = await sh([BUN, MAIN, '--harvest', '--config', b.writeConfig(crossref('cli', i), 'cli.toml')]);
    const line = r.out.split('\n').find((l) => l.startsWith('{"harvest"'));
    if (r.code !== 0 || !line) throw new Error(`--harvest failed (exit ${r.code}): ${r.out.slice(-2000)}`);
    const f = JSON.parse(line) as WindowFigures;
    full.cli = f.full;
    return f.ms;
  };
  const rounds = [];
  for (let i = 1; i <= ROUNDS; i++) {
    full = {};
    const alone = await windowed(async () => (await Bun.sleep(ALONE_MS), 0));
    if (i > 1) await changeWorks(fake);
    const own = await windowed(() => ownHarvest(i), true);
    const after = await windowed(async () => (await Bun.sleep(AFTER_MS), 0));
    await changeWorks(fake);
    const cli = await windowed(() => cliHarvest(i), true);
    const cliAfter = await windowed(async () => (await Bun.sleep(AFTER_MS), 0));
    rounds.push({ alone, own, after, cli, cliAfter, full });
  }
  await daemon.stop();
  return { rounds, probe };
}

async function main(): Promise<void> {
  await ensureWrk();
  const source = await millionStore();
  const { dir: data, manifest } = await ingestData();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const fake = await startProcess(
    [BUN, join(REPO, 'bench/crossref-server.ts'), String(WORKS)],
    (out) => /^(http:\S+)$/m.exec(out)?.[1],
  );

  console.log(`copying the 1M store and importing the ${fmt(RW_ROWS)}-row Retraction Watch CSV into it ...`);
  const a = copyStore(source, join(WORK, 'a'));
  const rw = await rwImport(a.config);
  const inProcessOnly = process.argv.includes('--in-process');
  // copy B, for the daemon of part 3, is taken before any harvest: it holds the store as the RW import left it
  const b = inProcessOnly ? undefined : copyStore(a.dir, join(WORK, 'b'));
  console.log(
    `harvesting ${fmt(WORKS)} works from the fake (its own process, pid ${fake.pid}) into that store, in this process, twice (full, then incremental) ...`,
  );
  const first = await harvestHere(a.dir, fake);
  await changeWorks(fake);
  const runs = [first, await harvestHere(a.dir, fake)];
  if (b) console.log(`the daemon: the Updates API alone and during a harvest, ${ROUNDS} rounds ...`);
  const underHarvest = b && (await apiUnderHarvest(b, fake, join(data, 'bucket'), manifest.a.slice(0, 30)));
  await fake.stop();

  const rateOf = (h: Harvested) => h.result.rows / (h.ms / 1000);
  const mode = (full: boolean | undefined) => (full ? 'full' : 'incremental');
  console.log(
    `\nCrossref harvest (issue 21): the fake REST API in its own process (${fmt(WORKS)} synthetic works, rows=${ROWS}), stores of 1M holdings + ${fmt(rw.used)} RW rows; 2 cores shared`,
  );
  console.log(
    '\n1. CrossrefHarvest.run() in this process (the fake in another), into one store: its first harvest (a full window, committed as a snapshot), then an incremental one of the same works, every update with a new date',
  );
  for (const h of runs) {
    const rate = rateOf(h);
    const heap = h.mem.heapBytes;
    const rest = h.ms - h.fetchMs - h.commitMs;
    const pc = (ms: number) => `${fmt(ms / 1000, 2)} s (${fmt((100 * ms) / h.ms)}%)`;
    console.log(
      `   ${mode(h.result.full)}: ${fmt(h.result.works)} works, ${fmt(h.result.rows)} rows (${fmt(h.result.used)} used, skipped ${JSON.stringify(h.result.skipped)}), ${h.result.pages} pages, ${fmt(h.bytes / 1e6, 1)} MB of replies`,
    );
    console.log(
      `     ${fmt(h.ms / 1000, 2)} s: ${fmt(rate)} records/s (target >= 20,000: ${met(rate >= 20_000)}); applied ${JSON.stringify(h.result.applied.production)}`,
    );
    console.log(
      `     time: waiting on the server (request to whole body) ${pc(h.fetchMs)}; rest of paging (parse, rows, scratch writes, progress saves) ${pc(rest)}; commit ${pc(h.commitMs)}`,
    );
    console.log(
      `     CPU: harvester ${fmt(h.cpuS, 2)} s, fake server ${fmt(h.serverCpu, 2)} s, in ${fmt(h.ms / 1000, 2)} s`,
    );
    console.log(
      `     peak JS heap (heapUsed, every 50 ms and after each page) ${MB(heap)} (target <= 256 MB: ${met(heap <= 256 * 1048576)}); while paging ${MB(h.pagingHeap)}; before the run ${MB(h.heapBefore)}`,
    );
    console.log(
      `     peak RssAnon (a worker thread, every 20 ms, the commit included) ${fmt(h.anonKb / 1024)} MiB, ${fmt(h.anonBefore / 1024)} MiB before; peak RSS (VmHWM, the store's mapped pages too) ${fmt(h.hwmKb / 1024)} MiB, ${fmt(h.rssBefore / 1024)} MiB before`,
    );
  }

  const rwRate = rw.rows / rw.seconds;
  console.log(
    `\n2. Retraction Watch import (bench/updates-import.ts's CSV: ${fmt(rw.rows)} rows, ${fmt(rw.bytes / 1e6, 1)} MB) into a copy of the 1M store, --import-updates:`,
  );
  console.log(
    `   ${fmt(rwRate)} rows/s (import ${fmt(rw.seconds, 2)} s, target <= 5 s; wall ${fmt(rw.wallS, 2)} s with the process start: ${fmt(rw.rows / rw.wallS)} rows/s); ${fmt(rw.used)} used, ${fmt(rw.works)} works, exit ${rw.code}`,
  );
  console.log(
    `   the harvest beside it: full ${fmt(rateOf(runs[0]!) / rwRate, 2)} x, incremental ${fmt(rateOf(runs[1]!) / rwRate, 2)} x the RW import's rows/s`,
  );

  if (!underHarvest) return;
  const { rounds, probe } = underHarvest;
  const hits = probe.documents.filter((d) => d.updates.length > 0).length;
  console.log(
    `\n3. Updates API (the daemon on another copy, 100-DOI bodies, probe: ${probe.documents.filter((d) => d.statusCode === 200).length} of 100 answered 200, ${hits} with updates), wrk -t2 -c50, ${ROUNDS} rounds of:`,
  );
  console.log(
    `   alone ${ALONE_MS / 1000} s; the daemon's own harvest of the ${fmt(WORKS)} works (SIGHUP after a config change); ${AFTER_MS / 1000} s after; --harvest of them in another process; ${AFTER_MS / 1000} s after`,
  );
  console.log(
    '   req/s (wrk p50, p99 ms, errors); "pause": the longest /healthz answer, polled one after another; "covered": the harvest\'s own time (its log line, its report) over the window;',
  );
  console.log(
    `   a harvest's window ends when the Updates API serves it (${PROBE_DOI}'s answer changed): "served after" is that time after the harvest's end`,
  );
  console.log(
    "   round 1 is each harvest's first (full, a snapshot), later rounds incremental windows of the same works; every harvest but the daemon's first changes the date of every update",
  );
  const w = (l: { rps: number; wrk: Load }) =>
    `${fmt(l.rps)} (${fmt(l.wrk.p50Ms, 1)}, ${fmt(l.wrk.p99Ms, 1)}, ${l.wrk.errors})`;
  type Window = {
    rps: number;
    seconds: number;
    harvestMs: number;
    servedMs: number;
    pauseMs: number;
    cpu: Record<string, number>;
    wrk: Load;
  };
  const during = (l: Window, alone: { rps: number }) =>
    `${w(l)} | ${fmt(l.pauseMs)} ms | ${fmt(l.seconds, 1)} s | ${fmt(Math.min(1, l.harvestMs / 1000 / l.seconds) * 100)}% | ${fmt(l.servedMs)} ms | ${fmt(l.rps / alone.rps, 2)}`;
  const after = (l: Window) => `${w(l)} | ${fmt(l.pauseMs)} ms`;
  console.log(
    '| round | alone | pause | harvest in the daemon | pause | window | covered | served after | ratio | 5 s after | pause | --harvest, other process | pause | window | covered | served after | ratio | 5 s after | pause |',
  );
  console.log(`|${' --- |'.repeat(1)}${' ---: |'.repeat(18)}`);
  rounds.forEach((r, i) =>
    console.log(
      `| ${i + 1} ${mode(r.full.own)} | ${after(r.alone)} | ${during(r.own, r.alone)} | ${after(r.after)} | ${during(r.cli, r.alone)} | ${after(r.cliAfter)} |`,
    ),
  );
  const cores = (l: Window) =>
    `${fmt(l.rps / l.cpu.daemon!)} | ${['daemon', 'niced', 'fake', 'system', 'idle'].map((k) => fmt(l.cpu[k]!, 2)).join(' | ')}`;
  console.log(
    "\n   CPU in each window, in cores (of 2): requests per second of the daemon's CPU; the daemon's threads; niced processes (the daemon's harvest); the fake; system time (all); idle",
  );
  console.log('| round | window | req per daemon CPU s | daemon | niced | fake | system | idle |');
  console.log(`| --- | --- |${' ---: |'.repeat(6)}`);
  rounds.forEach((r, i) =>
    (['alone', 'own', 'after', 'cli', 'cliAfter'] as const).forEach((k) =>
      console.log(`| ${i + 1} | ${k} | ${cores(r[k])} |`),
    ),
  );
  const incremental = rounds.slice(1);
  for (const [k, what] of [
    ['own', "the daemon's own harvest (issue 21's case)"],
    ['cli', '--harvest in another process'],
  ] as const) {
    const ratio = median(incremental.map((r) => r[k].rps / r.alone.rps));
    const secs = median(incremental.map((r) => r[k].harvestMs / 1000));
    console.log(
      `Updates API during ${what} / alone: incremental ${fmt(ratio, 3)} (median of ${incremental.length} rounds), full ${fmt(rounds[0]![k].rps / rounds[0]!.alone.rps, 3)}; target >= 0.8: ${met(ratio >= 0.8)}; that harvest under load: ${fmt(secs, 1)} s = ${fmt(WORKS / secs)} records/s (incremental, median)`,
    );
  }
}

const cleanup = async () => {
  await stopLoads();
  await stopAll();
  rmSync(WORK, { recursive: true, force: true });
};
await runBench(main, cleanup);
