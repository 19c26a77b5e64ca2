/**
 * Document status page benchmark (GET /doi/{doi}, server-rendered HTML): the real daemon (its own process) over a
 * store built here in a temporary folder: ~3,500 background DOIs deposited on three platforms, the Retraction
 * Watch sample (3,000 records) and one DOI with exactly 20 events (14 holding changes on three platforms across
 * ten deposit files, 6 Retraction Watch notices with reasons and links). Deposits go through `--ingest`, notices
 * through `--import-updates`, as an operator would. The page is fetched once: its weight (bytes) is printed.
 * In the same run, the ceiling: a bare Bun server (this file with --ceiling, its own process) answering every GET
 * with those same bytes and the same headers. Load from wrk (Debian's package, installed here if missing) on
 * 127.0.0.1, 2 threads, 50 connections, 5 s per run after a 2 s warm-up, three runs per server taken in turns, as
 * the Updates API benchmark does; each figure is the median run by req/s. The load asks for one DOI, so after
 * the first request the daemon answers from its page cache (src/http/routes/page-cache.ts), as it does for any page read
 * again before the DOI changes. Also the in-process cost of one page (no socket): app.handle() from the cache,
 * and rendered (the same app with no page cache), with its two parts, historyOf and renderHistoryPage.
 * Targets (the issue): >= 0.30 of the same-bytes ceiling; page weight <= 30 KB.
 */
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readDoiInput } from '../src/doi/index.ts';
import { historyOf } from '../src/history/index.ts';
import { createApp } from '../src/http/app.ts';
import { renderHistoryPage } from '../src/status-page/index.ts';
import { Store } from '../src/store/index.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { SAMPLE_PATH } from '../test/support/rw-sample.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt } from './lib/measure.ts';
import { indexesRead, startProcess, stopAll } from './lib/processes.ts';
import { ensureWrk, sh } from './lib/shell.ts';

const DURATION = '5s';
const WARMUP = '2s';
const ROUNDS = 3;
const CONNECTIONS = 50;
const RENDERS = 20_000;
const TARGET_RATIO = 0.3;
const TARGET_WEIGHT = 30 * 1024;
export const PLATFORMS = ['acme', 'beta', 'gamma'];
export const DOI = '10.5555/status-bench.2019.0420';
const EVENTS = 20;

// --- the ceiling: `bun bench/status-page.ts --ceiling BODY HEADERS.json` serves BODY with HEADERS for any GET ---

if (process.argv[2] === '--ceiling') {
  const body = readFileSync(process.argv[3]!);
  const headers = JSON.parse(readFileSync(process.argv[4]!, 'utf8')) as Record<string, string>;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      return new Response(body, { headers });
    },
  });
  console.log(`http://127.0.0.1:${server.port}`);
}

// --- the data ---

let fileSeq = 0;
/** `<bucket>/<platform>/<uuid>.jsonl.gz` with the given mtime (seconds); returns its path. */
function deposit(bucket: string, platform: string, lines: object[], mtime: number): string {
  fileSeq++;
  const path = join(bucket, platform, `00000000-0000-4000-8000-${fileSeq.toString(16).padStart(12, '0')}.jsonl.gz`);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, Bun.gzipSync(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`)));
  utimesSync(path, mtime, mtime);
  return path;
}

const vor = (platform: string, doi: string, version: number) => [
  { url: `https://${platform}.example.org/content/${doi}/v${version}.pdf`, contentType: 'application/pdf' },
  { url: `https://${platform}.example.org/content/${doi}/v${version}`, contentType: 'text/html' },
];

const ACCESS = ['paid', 'open', 'free', 'permFree'] as const;

/**
 * The deposit files in apply order: per platform a background file of 1,500 DOIs (overlapping ranges: ~3,500
 * distinct DOIs) and a later one changing or removing some; then the studied DOI's 14 holding events, each in its
 * own file (dated a few weeks apart) beside a few background changes:
 *   acme:  added open, links changed, access open → paid, removed, re-added free        (5)
 *   beta:  added paid, access paid → open, links changed, removed, re-added paid        (5)
 *   gamma: added free, links changed, access free → permFree, links and access changed (4)
 */
export function writeDeposits(bucket: string): string[] {
  const files: string[] = [];
  const t0 = Date.UTC(2021, 0, 4, 9, 30) / 1000;
  const day = 86_400;
  PLATFORMS.forEach((platform, p) => {
    const lines = Array.from({ length: 1500 }, (_, i) => {
      const doi = `10.5555/bg.${p * 1000 + i}`;
      return { doi, accessType: ACCESS[(i + p) % 4], vor: vor(platform, doi, 1) };
    });
    files.push(deposit(bucket, platform, lines, t0 + p * 3600));
  });
  PLATFORMS.forEach((platform, p) => {
    const lines = Array.from({ length: 300 }, (_, i) => {
      const doi = `10.5555/bg.${p * 1000 + i * 5}`;
      return i % 6 === 0
        ? { doi, deleted: true }
        : { doi, accessType: ACCESS[(i + p + 1) % 4], vor: vor(platform, doi, 2) };
    });
    files.push(deposit(bucket, platform, lines, t0 + 7 * day + p * 3600));
  });
  type Step = [platform: string, record: object];
  const rec = (platform: string, accessType: (typeof ACCESS)[number], version: number) => ({
    doi: DOI,
    accessType,
    vor: vor(platform, DOI, version),
  });
  const steps: Step[] = [
    ['acme', rec('acme', 'open', 1)],
    ['beta', rec('beta', 'paid', 1)],
    ['acme', rec('acme', 'open', 2)],
    ['gamma', rec('gamma', 'free', 1)],
    ['beta', rec('beta', 'open', 1)],
    ['acme', rec('acme', 'paid', 2)],
    ['gamma', rec('gamma', 'free', 2)],
    ['beta', rec('beta', 'open', 2)],
    ['acme', { doi: DOI, deleted: true }],
    ['gamma', rec('gamma', 'permFree', 2)],
    ['beta', { doi: DOI, deleted: true }],
    ['acme', rec('acme', 'free', 3)],
    ['gamma', rec('gamma', 'open', 3)],
    ['beta', rec('beta', 'paid', 3)],
  ];
  steps.forEach(([platform, record], s) => {
    const p = PLATFORMS.indexOf(platform);
    const background = Array.from({ length: 50 }, (_, i) => {
      const doi = `10.5555/bg.${p * 1000 + 700 + i}`;
      return { doi, accessType: ACCESS[(i + s) % 4], vor: vor(platform, doi, 3 + s) };
    });
    files.push(deposit(bucket, platform, [record, ...background], t0 + (30 + s * 23) * day + s * 3917));
  });
  return files;
}

const NOTICES = 6;
/**
 * The Retraction Watch sample with six rows about the studied DOI appended (one record per line, as the sample
 * is): an expression of concern, two corrections, a retraction, a reinstatement and a retraction again, each with
 * its own notice DOI, reasons and links.
 */
export function writeUpdates(path: string): void {
  const sample = readFileSync(SAMPLE_PATH, 'utf8').replace(/\n*$/, '\n');
  const natures = ['Expression of concern', 'Correction', 'Correction', 'Retraction', 'Reinstatement', 'Retraction'];
  const dates = [
    '3/15/2022 0:00',
    '6/1/2022 0:00',
    '9/20/2022 0:00',
    '2/2/2023 0:00',
    '7/11/2023 0:00',
    '1/30/2024 0:00',
  ];
  const reasons = [
    '+Concerns/Issues About Data;+Concerns/Issues About Image;+Investigation by Journal/Publisher;',
    '+Error in Data;+Error in Text;',
    '+Error in Figures;+Error in Results and/or Conclusions;',
    '+Concerns/Issues About Data;+Duplication of/in Image;+Euphemisms for Duplication;+Investigation by Third Party;+Unreliable Data;+Paper Mill;',
    '+Investigation by Journal/Publisher;+Upgrade/Update of Prior Notice(s);',
    '+Concerns/Issues About Data;+Fake Peer Review;+Investigation by Journal/Publisher;+Investigation by Third Party;+Unreliable Results and/or Conclusions;',
  ];
  const rows = natures.map((nature, i) => {
    const urls = `https://retractionwatch.com/2022/0${i + 1}/1${i}/status-bench-story-${i}/;https://pubpeer.com/publications/STATUSBENCH${i}ABCDEF;`;
    const fields = [
      String(990_000 + i),
      'A study of status pages under load',
      '(BLS) Biology - Cellular;(HSC) Medicine - Oncology;',
      '"Department of Examples, Example University, Example City, Exampleland;"',
      'Journal of Benchmarks',
      'Example Publishing',
      'Exampleland',
      'A. Author;B. Author;C. Author',
      `"${urls}"`,
      'Research Article;',
      dates[i]!,
      `10.5555/status-bench.notice.${i + 1}`,
      '0',
      '4/20/2019 0:00',
      DOI,
      '0',
      nature,
      `"${reasons[i]}"`,
      'No',
      'None',
    ];
    return fields.join(',');
  });
  writeFileSync(path, `${sample}${rows.join('\n')}\n`);
}

// --- processes and load ---

interface Load {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

function wrkScript(dir: string): string {
  const path = join(dir, 'get.lua');
  writeFileSync(
    path,
    `wrk.method = "GET"
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  return path;
}

async function wrk(url: string, script: string, duration = DURATION): Promise<Load> {
  const r = await sh(['wrk', '-t2', `-c${CONNECTIONS}`, `-d${duration}`, '-s', script, url]);
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(r.out);
  if (!m) throw new Error(`wrk printed no result: ${r.out}`);
  const [requests, durationUs, p50, p99, statusErrors, socketErrors] = m.slice(1).map(Number) as number[];
  return {
    rps: requests! / (durationUs! / 1e6),
    p50Ms: p50! / 1000,
    p99Ms: p99! / 1000,
    errors: statusErrors! + socketErrors!,
  };
}

async function run(args: string[], what: string, okCodes = [0]): Promise<string> {
  const r = await sh([process.execPath, join(REPO, 'src/main.ts'), ...args]);
  if (!okCodes.includes(r.code)) throw new Error(`${what} failed (exit ${r.code}): ${r.out.slice(-2000)}`);
  return r.out;
}

/** µs per call of `fn`, `n` calls after n/10 unmeasured ones; the median of three batches. */
async function perCall(n: number, fn: () => unknown | Promise<unknown>): Promise<number> {
  for (let i = 0; i < n / 10; i++) await fn();
  const batches: number[] = [];
  for (let b = 0; b < 3; b++) {
    const t = performance.now();
    for (let i = 0; i < n / 3; i++) await fn();
    batches.push(((performance.now() - t) * 1000) / (n / 3));
  }
  return batches.sort((a, b) => a - b)[1]!;
}

const median = (loads: Load[]) => [...loads].sort((a, b) => a.rps - b.rps)[loads.length >> 1]!;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

async function main(): Promise<void> {
  await ensureWrk();
  const work = tempDir('doi-holdings-bench-status-');
  const onSignal = () => void stopAll().finally(() => (work.remove(), process.exit(130)));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const deposits = join(work.path, 'deposits');
    const config = join(work.path, 'status.toml');
    mkdirSync(join(work.path, 'bucket'), { recursive: true });
    writeDaemonConfig(config, {
      mapSizeGiB: 1,
      bucket: 'bucket',
      platforms: PLATFORMS.map((name) => ({ name })),
      apiKey: 'bench-key-0123456789',
      updates: true,
    });
    // the daemon's bucket stays empty: the deposits are applied by --ingest, in this order, before it starts
    const files = writeDeposits(deposits);
    console.log(
      `status page: ingesting ${files.length} deposit files and importing the Retraction Watch sample + ${NOTICES} rows ...`,
    );
    await run(['--ingest', ...files, '--config', config], '--ingest');
    const csvPath = join(work.path, 'retraction-watch.csv');
    writeUpdates(csvPath);
    const imported = JSON.parse(
      (await run(['--import-updates', csvPath, '--config', config], '--import-updates')).trim().split('\n').pop()!,
    ) as { rows: number; used: number; works: number };
    if (imported.used !== imported.rows)
      throw new Error(
        `--import-updates used ${imported.used} of ${imported.rows} rows (every row of the sample and ours should be usable)`,
      );

    // in-process cost of one page (no socket), on the app the daemon serves, over the same store
    const store = Store.open(join(work.path, 'db'), 'production', { mapSizeBytes: 1 << 30, readOnly: true });
    let inProcess: { cached: number; handle: number; history: number; render: number };
    try {
      const deps = {
        integrators: [],
        maxBodyBytes: 64 * 1024,
        envs: { production: { store } },
        health: () => ({ ok: true, checks: {} }),
        version: 'bench',
      };
      // the daemon's app keeps rendered pages; the same app with no page cache renders every time (a miss)
      const app = createApp(deps);
      const uncached = createApp({ ...deps, pageCacheBytes: 0 });
      const pageUrl = `http://localhost/doi/${DOI}`;
      const first = await app.handle(new Request(pageUrl));
      const firstText = await first.text();
      if (first.status !== 200 || !(first.headers.get('content-type') ?? '').startsWith('text/html'))
        throw new Error(`in-process page: HTTP ${first.status}`);
      if ((await (await uncached.handle(new Request(pageUrl))).text()) !== firstText)
        throw new Error('the cached and the rendered page differ');
      const input = readDoiInput(DOI);
      if (input.problem !== undefined) throw new Error(`${DOI}: ${input.problem}`);
      const key = input.key;
      const history = historyOf(store, key)!;
      inProcess = {
        cached: await perCall(RENDERS, async () => (await app.handle(new Request(pageUrl))).arrayBuffer()),
        handle: await perCall(RENDERS, async () => (await uncached.handle(new Request(pageUrl))).arrayBuffer()),
        history: await perCall(RENDERS, () => historyOf(store, key)),
        render: await perCall(RENDERS, () => renderHistoryPage(history, { staging: false })),
      };
    } finally {
      await store.close();
    }

    console.log('starting the daemon ...');
    const daemon = await startProcess(
      [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
      (out) => /"url":"([^"]+)"/.exec(out)?.[1],
    );
    await indexesRead(daemon);
    const path = `/doi/${DOI}`;
    const json = (await (await fetch(`${daemon.url}${path}?format=json`)).json()) as {
      events?: { kind: string }[];
      status?: { label: string };
    };
    const events = json.events ?? [];
    const notices = events.filter((e) => e.kind === 'notice').length;
    if (events.length !== EVENTS)
      throw new Error(
        `GET ${path}?format=json has ${events.length} events (${notices} notices), not ${EVENTS}: ${JSON.stringify(json).slice(0, 2000)}`,
      );
    const res = await fetch(`${daemon.url}${path}`);
    const page = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200 || !(res.headers.get('content-type') ?? '').startsWith('text/html'))
      throw new Error(`GET ${path}: HTTP ${res.status} ${res.headers.get('content-type')}`);
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (
        k !== 'date' &&
        k !== 'content-length' &&
        k !== 'transfer-encoding' &&
        k !== 'connection' &&
        k !== 'keep-alive'
      )
        headers[k] = v;
    });
    const bodyPath = join(work.path, 'page.html');
    const headersPath = join(work.path, 'headers.json');
    writeFileSync(bodyPath, page);
    writeFileSync(headersPath, JSON.stringify(headers));
    const ceiling = await startProcess(
      [process.execPath, join(REPO, 'bench/status-page.ts'), '--ceiling', bodyPath, headersPath],
      (out) => /^(http:\S+)$/m.exec(out)?.[1],
    );
    const check = await fetch(`${ceiling.url}${path}`);
    if (Buffer.compare(Buffer.from(await check.arrayBuffer()), Buffer.from(page)) !== 0)
      throw new Error('the ceiling does not send the page bytes');

    const script = wrkScript(work.path);
    const targets = { daemon: `${daemon.url}${path}`, ceiling: `${ceiling.url}${path}` };
    // both servers warmed first, then turns (this machine's speed drifts over tens of seconds; turns spread it)
    console.log(`load: warm-up, then ${ROUNDS} runs per server in turns ...`);
    for (const url of Object.values(targets)) await wrk(url, script, WARMUP);
    const runs: Record<keyof typeof targets, Load[]> = { daemon: [], ceiling: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const [server, url] of Object.entries(targets))
        runs[server as keyof typeof targets].push(await wrk(url, script));
    await stopAll();

    const d = median(runs.daemon);
    const c = median(runs.ceiling);
    const daemonErrors = runs.daemon.reduce((n, l) => n + l.errors, 0);
    const ceilingErrors = runs.ceiling.reduce((n, l) => n + l.errors, 0);
    const ratio = d.rps / c.rps;
    const weight = page.length;
    console.log(
      `\nDocument status page: GET ${path} (${EVENTS} events: ${EVENTS - notices} holding changes on ${PLATFORMS.length} platforms, ${notices} notices; status "${json.status?.label}"); store of ~3,500 DOIs and the Retraction Watch sample; wrk -t2 -c${CONNECTIONS} -d${DURATION} on 127.0.0.1 (client and servers share the 2 cores), ${ROUNDS} runs per server taken in turns, median shown`,
    );
    console.log(
      `page weight: ${fmt(weight)} bytes = ${fmt(weight / 1024, 1)} KB (target <= ${TARGET_WEIGHT / 1024} KB: ${met(weight <= TARGET_WEIGHT)}); the ceiling sends these bytes with the daemon's headers`,
    );
    console.log(
      `every run's pages/s: daemon ${runs.daemon.map((l) => fmt(l.rps)).join(', ')}; ceiling ${runs.ceiling.map((l) => fmt(l.rps)).join(', ')}`,
    );
    console.log(
      `in process (${fmt(RENDERS)} calls each, no socket): from the page cache (what the load above measures) ${fmt(inProcess.cached, 1)} µs per page; rendered (a cache miss: the first reader after a change) ${fmt(inProcess.handle, 1)} µs = historyOf ${fmt(inProcess.history, 1)} µs + renderHistoryPage ${fmt(inProcess.render, 1)} µs + the rest (routing, Buffer, hash, headers) ${fmt(inProcess.handle - inProcess.history - inProcess.render, 1)} µs\n`,
    );
    console.log(
      '| page | daemon pages/s | p50 ms | p99 ms | errors (all runs) | ceiling, same bytes: pages/s (p50, p99) | ratio | target | result |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
    console.log(
      `| ${EVENTS}-event DOI, ${fmt(weight / 1024, 1)} KB | ${fmt(d.rps)} | ${fmt(d.p50Ms, 2)} | ${fmt(d.p99Ms, 2)} | ${daemonErrors} | ${fmt(c.rps)} (${fmt(c.p50Ms, 2)}, ${fmt(c.p99Ms, 2)})${ceilingErrors ? `, ${ceilingErrors} errors` : ''} | ${fmt(ratio, 2)} | >= ${fmt(TARGET_RATIO, 2)} of the ceiling | ${met(ratio >= TARGET_RATIO && daemonErrors === 0)} |`,
    );
    console.log(
      `\nstatus page, ${EVENTS}-event DOI: ${fmt(d.rps)} pages/s (p50 ${fmt(d.p50Ms, 2)} ms, p99 ${fmt(d.p99Ms, 2)} ms) vs same-bytes ceiling ${fmt(c.rps)} pages/s: ratio ${fmt(ratio, 2)} (target >= ${fmt(TARGET_RATIO, 2)}: ${met(ratio >= TARGET_RATIO)}); page weight ${fmt(weight / 1024, 1)} KB (target <= 30 KB: ${met(weight <= TARGET_WEIGHT)}); in process ${fmt(inProcess.cached, 1)} µs per page from the page cache, ${fmt(inProcess.handle, 1)} µs rendered`,
    );
  } finally {
    await stopAll();
    work.remove();
  }
}

if (import.meta.main && process.argv[2] !== '--ceiling')
  await main().catch((e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  });
