/**
 * Entitlement API benchmark (issue 17): the real daemon (its own process) over 1.1M holdings ingested from the
 * generated deposits; load from wrk (Debian's package, installed here if missing) on 127.0.0.1, 2 threads, 50
 * connections, 5 s per run after a 2 s warm-up, three runs per server taken in turns, as the Updates API
 * benchmark does. Five scenarios:
 *   (a) bodies of 100 open DOIs (open, free or permFree holdings of all five platforms: answered from the deposit);
 *   (b) bodies of 1 open DOI;
 *   (c) bodies of 100 paid DOIs of one platform (wiley), whose Entitlement API is a loopback server
 *       (bench/lib/platform-server.ts, its own process) answering every call in 5 ms; calls of 20 DOIs (the
 *       default batch, so 5 calls a request), up to 512 in flight, the breaker's defaults;
 *   (d) the same platform hanging (never answering): every call ends at the daemon's 1 s time-out.
 *       (d1) the breaker effectively off (breakerFailures = 1000, a second daemon on the same store): a hanging
 *            load of 100-paid-DOI bodies beside the (a) load, whose req/s is compared with (a) alone, measured in
 *            turns on the same daemon. The hanging load has 20 connections, not 50: every request makes 5 calls
 *            that fail, and 50 would pass the breaker's 1000 consecutive failures (its most) within a run; a
 *            call answered between runs resets the count. wrk's min latency shows whether it ever opened.
 *       (d2) the breaker on (its defaults: 5 failures open it for 30 s): 100-paid-DOI bodies at 50 connections,
 *            no warm-up; p50/p99/max and the number of 504 entries answered.
 *   (e) 100 paid DOIs against the same platform answering as GetFTR asks publishers to (each call's time drawn from
 *       a log-normal of mean 300 ms and p95 500 ms), one call per request (entitlementBatch = 100), 50 connections,
 *       3 runs of 10 s: the daemon's p50 and p99 beside the platform's own in the same run, and the latency added.
 *   (f) entries by metadata (issue 51): a daemon of its own whose [entitlements.lookup] is a loopback Crossref
 *       answering every call in 50 ms; one request of 100 metadata entries, each resolving to a DOI held open, timed
 *       whole beside the lookup's time-out (its defaults: 1 s, 16 calls at once); then the same request again, and
 *       the calls Crossref answered for it (from the lookup cache: none). `bun bench/entitlements.ts --lookup-only`
 *       runs (f) alone (no 1.1M store, no wrk), in seconds (bench/lib/lookup-scenario.ts).
 * In the same run, the ceilings of the Updates API benchmark (bench/ceiling-server.ts): a bare Bun server that
 * parses the body and returns a fixed reply, tiny, or of the size the daemon sends for such a body (its real
 * reply, saved). For (c) also a ceiling that makes the same platform calls (bench/lib/paid-ceiling-server.ts:
 * a bare Bun server that parses the body, fetches the 5 batches from the same loopback platform, parses each
 * answer and returns the saved reply): the least work any server does for (c), so its p99 shows what this machine
 * allows for the (c) target, with wrk, the platform and the server sharing 2 cores. It runs twice: calling with
 * fetch, as the daemon does, and with a bare socket client that no real platform could be called with (no TLS,
 * time-outs or error handling), which shows how much of the machine fetch takes. The integrator has
 * updates = false and the answer cache is off (entitlementCacheSeconds 0).
 * Prints req/s, p50, p99 (and max where the target is about it), each figure beside its reference and target.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/support/fixtures.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { PLATFORM_NAMES, prng } from './lib/deposit-generator.ts';
import type { Manifest } from './lib/ingest-data.ts';
import { ingestData, REPO } from './lib/ingest-data.ts';
import { type LookupFigures, lookupScenario } from './lib/lookup-scenario.ts';
import { fmt } from './lib/measure.ts';
import { cpuSplit, machineCpu } from './lib/process-probes.ts';
import { indexesRead, type Started, startProcess, stopAll } from './lib/processes.ts';
import { ensureWrk, sh } from './lib/shell.ts';

const KEY = 'bench-key-0123456789';
const SECRET_ENV = 'BENCH_PLATFORM_SECRET';
const SECRET = 'bench-platform-secret-0123456789abcdef';
const ORG = { ipv4: '192.0.2.10' };
const DURATION = '5s';
const WARMUP = '2s';
const ROUNDS = 3;
const CONNECTIONS = 50;
/** the platform whose paid DOIs are asked of its Entitlement API; the others have none configured */
const PAID_PLATFORM = 'wiley';
const PLATFORM_DELAY_MS = 5;
/** (e): GetFTR's guideline for publishers' Entitlement APIs (300 ms on average, p95 500 ms, calls closed at 1 s) */
const GETFTR_MEAN_MS = 300;
const GETFTR_P95_MS = 500;
/** (e)'s runs are longer: at ~150 requests/s, 5 s would give its p99 from a few dozen requests */
const GUIDELINE_DURATION = '10s';
const TIMEOUT_MS = 1000;
const CONCURRENCY = 512;
/** (d1)'s hanging load; see the header for why not 50 */
const HANG_CONNECTIONS = 20;
/** deposit files (of part a, in apply order) whose DOIs make the pools; all later files are read for their fate */
const POOL_FILES = 30;

interface Pools {
  /** DOIs whose holding is open, free or permFree after every file (all platforms) */
  open: string[];
  /** DOIs of PAID_PLATFORM whose holding is paid after every file */
  paid: string[];
}

/**
 * DOIs first deposited in the first POOL_FILES files of part a, followed through every later file of parts a
 * and b (in apply order: a later file may change a DOI's access type or remove it); kept when their last
 * record is the access type wanted.
 */
export function doiPools(data: string, manifest: Manifest): Pools {
  const last = new Map<string, { platform: string; access: string }>();
  const keys = [...manifest.a, ...manifest.b];
  keys.forEach((key, i) => {
    const platform = key.slice(0, key.indexOf('/'));
    const text = new TextDecoder().decode(Bun.gunzipSync(readFileSync(join(data, 'bucket', key))));
    for (const line of text.split('\n')) {
      if (!line) continue;
      // every generated line starts {"doi":"...", so files after the pool's are only parsed for the pool's DOIs
      const doi = line.startsWith('{"doi":"')
        ? line.slice(8, line.indexOf('"', 8))
        : (JSON.parse(line) as { doi: string }).doi;
      if (i >= POOL_FILES && !last.has(doi)) continue;
      const r = JSON.parse(line) as { doi: string; accessType?: string; deleted?: boolean };
      last.set(r.doi, { platform, access: r.deleted ? 'deleted' : (r.accessType ?? 'none') });
    }
  });
  const open: string[] = [];
  const paid: string[] = [];
  for (const [doi, { platform, access }] of last) {
    if (access === 'open' || access === 'free' || access === 'permFree') open.push(doi);
    else if (access === 'paid' && platform === PAID_PLATFORM) paid.push(doi);
  }
  return { open, paid };
}

/** `count` bodies of `n` distinct DOIs each, drawn from the pool with a seeded PRNG */
export function bodies(n: number, count: number, pool: readonly string[], seed: number): string[] {
  const rand = prng(seed);
  return Array.from({ length: count }, () => {
    const dois = new Set<string>();
    while (dois.size < n) dois.add(pool[Math.floor(rand() * pool.length)]!);
    return JSON.stringify({ org: ORG, dois: [...dois] });
  });
}

/**
 * A wrk script cycling through the bodies; done() prints one RESULT line. With `count`, response() also counts
 * the entries answered with statusCode 504 and 200 (the bodies are read, which costs wrk some speed).
 */
function wrkScript(dir: string, name: string, list: string[], count = false): string {
  const path = join(dir, `${name}.lua`);
  const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  writeFileSync(
    path,
    `local bodies = {${list.map(luaString).join(',\n')}}
local i = 0
local threads = {}
n504 = 0
n200 = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["x-api-key"] = "${KEY}"
setup = function(thread)
  table.insert(threads, thread)
end
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
${
  count
    ? `response = function(status, headers, body)
  local _, a = string.gsub(body, '"statusCode"%s*:%s*504', "")
  local _, b = string.gsub(body, '"statusCode"%s*:%s*200', "")
  n504 = n504 + a
  n200 = n200 + b
end
`
    : ''
}done = function(summary, latency, requests)
  local a, b = ${count ? '0, 0' : '-1, -1'}
  ${count ? 'for _, t in ipairs(threads) do a = a + t:get("n504"); b = b + t:get("n200") end' : ''}
  io.write(string.format("RESULT %d %d %d %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.min, latency.max, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout, a, b))
end
`,
  );
  return path;
}

interface Load {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  minMs: number;
  maxMs: number;
  /** non-2xx answers, socket errors and wrk time-outs */
  errors: number;
  /** entries answered with statusCode 504 / 200 (counting scripts only, else -1) */
  entries504: number;
  entries200: number;
  /** with WrkOptions.pid: the server's CPU per request (µs, user and system) and the machine's idle cores over the run */
  cpu?: { userUs: number; sysUs: number; idleCores: number };
}

interface WrkOptions {
  duration?: string;
  threads?: number;
  connections?: number;
  /** wrk's own time-out (its default, 2 s, would hide a slow answer as an error) */
  timeout?: string;
  /** the server's process, whose CPU the run reads (Load.cpu) */
  pid?: number;
}

async function wrk(url: string, script: string, o: WrkOptions = {}): Promise<Load> {
  const before =
    o.pid === undefined ? undefined : { server: cpuSplit(o.pid), machine: machineCpu(), at: performance.now() };
  const r = await sh([
    'wrk',
    `-t${o.threads ?? 2}`,
    `-c${o.connections ?? CONNECTIONS}`,
    `-d${o.duration ?? DURATION}`,
    '--timeout',
    o.timeout ?? '5s',
    '-s',
    script,
    url,
  ]);
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (-?\d+) (-?\d+)/.exec(r.out);
  if (!m) throw new Error(`wrk printed no result: ${r.out}`);
  const [requests, durationUs, p50, p99, min, max, statusErrors, socketErrors, timeouts, e504, e200] = m
    .slice(1)
    .map(Number) as number[];
  return {
    requests: requests!,
    rps: requests! / (durationUs! / 1e6),
    p50Ms: p50! / 1000,
    p99Ms: p99! / 1000,
    minMs: min! / 1000,
    maxMs: max! / 1000,
    errors: statusErrors! + socketErrors! + timeouts!,
    entries504: e504!,
    entries200: e200!,
    cpu: before && cpuPerRequest(before, o.pid!, requests!),
  };
}

/** Load.cpu, from the probes taken before a run of `requests` requests */
function cpuPerRequest(
  before: { server: { user: number; system: number }; machine: { idle: number }; at: number },
  pid: number,
  requests: number,
): Load['cpu'] {
  const server = cpuSplit(pid);
  const perRequestUs = (seconds: number) => (seconds * 1e6) / Math.max(1, requests);
  return {
    userUs: perRequestUs(server.user - before.server.user),
    sysUs: perRequestUs(server.system - before.server.system),
    idleCores: (machineCpu().idle - before.machine.idle) / ((performance.now() - before.at) / 1000),
  };
}

const listening = (out: string) => /^(http:\S+)$/m.exec(out)?.[1];

/**
 * The daemon on `config`, once its ingest is idle. The first start applies `files` deposit files; a restart on
 * the same store applies none (the ledger skips them, and filesApplied counts this process's applies only), so
 * it waits for an empty queue twice in a row, and for the entitlement index (read on a worker thread after it listens).
 */
async function startDaemon(config: string, files: number): Promise<Started> {
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
    { [SECRET_ENV]: SECRET },
  );
  let idle = 0;
  for (;;) {
    const h = (await (await fetch(`${daemon.url}/healthz`)).json()) as {
      production: { filesApplied: number; queueDepth: number };
    };
    idle = h.production.queueDepth === 0 ? idle + 1 : 0;
    if (idle > 0 && (files === 0 ? idle >= 2 : h.production.filesApplied >= files)) break;
    await Bun.sleep(250);
  }
  await indexesRead(daemon);
  return daemon;
}

function daemonConfig(path: string, data: string, platformUrl: string, breakerFailures?: number, batch = 20): string {
  writeDaemonConfig(path, {
    mapSizeGiB: 16,
    bucket: join(data, 'bucket'),
    platforms: PLATFORM_NAMES.map((name) =>
      name === PAID_PLATFORM
        ? {
            name,
            settings: [
              `entitlementUrl = "${platformUrl}/entitlements"`,
              `entitlementSecretEnv = "${SECRET_ENV}"`,
              `entitlementTimeoutMs = ${TIMEOUT_MS}`,
              `entitlementConcurrency = ${CONCURRENCY}`,
              `entitlementBatch = ${batch}`,
              'entitlementCacheSeconds = 0',
            ],
          }
        : { name },
    ),
    apiKey: KEY,
    updates: false,
    extra: breakerFailures === undefined ? '' : `[entitlements]\nbreakerFailures = ${breakerFailures}\n`,
  });
  return path;
}

interface EntitlementReply {
  entitlements: { doi: string; statusCode: number; entitled?: string; source?: string }[];
}

async function post(url: string, body: string): Promise<Response> {
  return fetch(`${url}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body,
  });
}

/**
 * Every prepared body is asked once (16 at a time); each entry must come back, in order, with statusCode 200
 * and the source the scenario is about, else the bench measures something else and stops here.
 */
async function verify(url: string, kind: string, list: string[], source: string): Promise<void> {
  let next = 0;
  const fail = (i: number, why: string) => {
    throw new Error(
      `${kind}: body ${i} was not answered as the scenario needs (every entry statusCode 200, source "${source}"): ${why}`,
    );
  };
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < list.length) {
        const i = next++;
        const res = await post(url, list[i]!);
        const text = await res.text();
        if (res.status !== 200)
          fail(
            i,
            `HTTP ${res.status} ${text.slice(0, 300)}${res.status === 404 ? ' (is the Entitlement API route in this build?)' : ''}`,
          );
        const sent = (JSON.parse(list[i]!) as { dois: string[] }).dois;
        const got = (JSON.parse(text) as EntitlementReply).entitlements;
        if (got?.length !== sent.length) fail(i, `${sent.length} DOIs asked, ${got?.length} entries answered`);
        got.forEach((e, j) => {
          if (e.doi !== sent[j] || e.statusCode !== 200 || e.source !== source)
            fail(i, `entry ${j} for ${sent[j]}: ${JSON.stringify(e)}`);
        });
      }
    }),
  );
}

async function platformMode(
  url: string,
  mode: { delayMs: number } | { hang: true } | { meanMs: number; p95Ms: number },
): Promise<void> {
  const res = await fetch(`${url}/mode`, { method: 'PUT', body: JSON.stringify(mode) });
  if (res.status !== 204) throw new Error(`the loopback platform refused the mode: ${res.status}`);
}

interface PlatformStats {
  calls: number;
  dois: number;
  unauthorized: number;
  hanging: number;
  abandoned: number;
  /** the calls answered since the mode was last set: the platform's own time, request to answer */
  served: { calls: number; p50Ms: number; p99Ms: number };
}

async function platformStats(url: string): Promise<PlatformStats> {
  return (await (await fetch(`${url}/stats`)).json()) as PlatformStats;
}

const median = (loads: Load[]) => [...loads].sort((a, b) => a.rps - b.rps)[loads.length >> 1]!;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

/** Scenario (f)'s figures, printed (never asserted: a figure of this machine). */
function printLookup(f: LookupFigures): void {
  console.log(
    `\n| (f) entries by metadata | entries | Crossref answers in | lookup time-out | concurrency | first request ms | resolved / timed out | Crossref calls | repeat ms | Crossref calls by the repeat | target | result |`,
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  const ok = f.firstMs <= f.timeoutMs && f.timedOut === 0 && f.repeatCalls === 0;
  console.log(
    `| ${f.entries} title/journal/author/year entries, each a DOI held open | ${f.entries} | ${f.delayMs} ms | ${f.timeoutMs} ms | ${f.concurrency} | ${fmt(f.firstMs, 1)} | ${f.resolved} / ${f.timedOut} | ${f.firstCalls} | ${fmt(f.repeatMs, 1)} | ${f.repeatCalls} | all resolved within the time-out; the repeat makes no call | ${met(ok)} |`,
  );
}

if (import.meta.main && process.argv.includes('--lookup-only')) {
  const work = tempDir('doi-holdings-bench-lookup-');
  try {
    printLookup(await lookupScenario(work.path));
  } finally {
    await stopAll();
    work.remove();
  }
} else if (import.meta.main) {
  await ensureWrk();
  const { dir: data, manifest } = await ingestData();
  const work = tempDir('doi-holdings-bench-entitlements-');
  try {
    const pools = doiPools(data, manifest);
    const list = {
      open100: bodies(100, 300, pools.open, 1),
      open1: bodies(1, 2000, pools.open, 2),
      paid100: bodies(100, 300, pools.paid, 3),
    };
    const scripts = {
      open100: wrkScript(work.path, 'open100', list.open100),
      open1: wrkScript(work.path, 'open1', list.open1),
      paid100: wrkScript(work.path, 'paid100', list.paid100),
    };
    const paidCounting = wrkScript(work.path, 'paid100-count', list.paid100, true);

    const platform = await startProcess(
      [process.execPath, join(REPO, 'bench/lib/platform-server.ts'), String(PLATFORM_DELAY_MS)],
      listening,
    );
    const files = manifest.a.length + manifest.b.length;
    console.log(`starting the daemon and ingesting ${files} deposit files (1.1M holdings) ...`);
    let daemon = await startDaemon(daemonConfig(join(work.path, 'breaker-defaults.toml'), data, platform.url), files);
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    const live = [...metrics.matchAll(/^doi_holdings_live\{[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);

    await verify(daemon.url, '(a) 100 open DOIs', list.open100, 'oa_platform');
    await verify(daemon.url, '(b) 1 open DOI', list.open1, 'oa_platform');
    await verify(daemon.url, '(c) 100 paid DOIs', list.paid100, 'service_request');
    const verifiedCalls = (await platformStats(platform.url)).calls;

    // typical answers of the daemon, for the same-size ceilings
    const saved = async (name: string, body: string) => {
      const path = join(work.path, name);
      writeFileSync(path, new Uint8Array(await (await post(daemon.url, body)).arrayBuffer()));
      return path;
    };
    const reply = {
      open1: await saved('reply-open-1.json', list.open1[0]!),
      open100: await saved('reply-open-100.json', list.open100[0]!),
      paid100: await saved('reply-paid-100.json', list.paid100[0]!),
    };

    const ceiling = (...args: string[]) =>
      startProcess([process.execPath, join(REPO, 'bench/ceiling-server.ts'), ...args], listening);
    const tiny = await ceiling();
    const sameOpen = await ceiling(reply.open1, reply.open100);
    const samePaid = await ceiling(reply.open1, reply.paid100);
    const paidCeiling = (client: 'fetch' | 'socket') =>
      startProcess(
        [
          process.execPath,
          join(REPO, 'bench/lib/paid-ceiling-server.ts'),
          `${platform.url}/entitlements`,
          reply.paid100,
          '20',
          client,
        ],
        listening,
      );
    const calls = await paidCeiling('fetch');
    const socketCalls = await paidCeiling('socket');
    const api = `${daemon.url}/v2.2/entitlements`;
    type Server = 'api' | 'tiny' | 'same' | 'calls' | 'socket';
    // (c) has no tiny-reply runs of its own: a tiny reply to a 100-DOI body costs the ceiling the same whichever
    // DOIs the body holds, so (c) shows (a)'s (this saves ~17 s)
    const target = (url: string, s: Started) => ({ url, pid: s.pid });
    const servers = {
      api: target(api, daemon),
      tiny: target(tiny.url, tiny),
      sameOpen: target(sameOpen.url, sameOpen),
      samePaid: target(samePaid.url, samePaid),
      calls: target(calls.url, calls),
      socket: target(socketCalls.url, socketCalls),
    };
    const kinds: Record<
      'open100' | 'open1' | 'paid100',
      { script: string; targets: Partial<Record<Server, { url: string; pid: number }>> }
    > = {
      open100: { script: scripts.open100, targets: { api: servers.api, tiny: servers.tiny, same: servers.sameOpen } },
      open1: { script: scripts.open1, targets: { api: servers.api, tiny: servers.tiny, same: servers.sameOpen } },
      paid100: {
        script: scripts.paid100,
        targets: { api: servers.api, same: servers.samePaid, calls: servers.calls, socket: servers.socket },
      },
    };
    // Every server is warmed first, then the servers take turns, ROUNDS runs each (this machine's speed drifts
    // over tens of seconds; turns spread the drift over all alike). Each figure is the median run by req/s.
    console.log('(a), (b), (c): warm-up, then 3 runs per server in turns ...');
    for (const { script, targets } of Object.values(kinds))
      for (const t of Object.values(targets)) await wrk(t!.url, script, { duration: WARMUP });
    const callsBefore = (await platformStats(platform.url)).calls;
    const runs: Record<string, Record<Server, Load[]>> = {};
    for (const [name, { script, targets }] of Object.entries(kinds)) {
      runs[name] = { api: [], tiny: [], same: [], calls: [], socket: [] };
      for (let round = 0; round < ROUNDS; round++)
        for (const [server, t] of Object.entries(targets))
          runs[name]![server as Server].push(await wrk(t!.url, script, { pid: t!.pid }));
    }
    runs.paid100!.tiny = runs.open100!.tiny;
    const paidRequests = (['api', 'calls', 'socket'] as const).reduce(
      (n, s) => n + runs.paid100![s].reduce((m, l) => m + l.requests, 0),
      0,
    );
    const callsPerPaidRequest = ((await platformStats(platform.url)).calls - callsBefore) / paidRequests;
    for (const s of [tiny, sameOpen, samePaid, calls, socketCalls]) await s.stop();
    const results = Object.fromEntries(
      Object.entries(runs).map(([name, r]) => [
        name,
        {
          api: { ...median(r.api), errors: r.api.reduce((n, l) => n + l.errors, 0) },
          tiny: median(r.tiny),
          same: median(r.same),
          calls: r.calls.length ? median(r.calls) : undefined,
          socket: r.socket.length
            ? { ...median(r.socket), errors: r.socket.reduce((n, l) => n + l.errors, 0) }
            : undefined,
        },
      ]),
    ) as Record<keyof typeof kinds, { api: Load; tiny: Load; same: Load; calls?: Load; socket?: Load }>;

    // (d2): the platform hangs, the breaker has its defaults; no warm-up, so the first calls meet a closed breaker
    console.log('(d2): the platform hanging, the breaker on ...');
    await platformMode(platform.url, { hang: true });
    const d2Before = (await platformStats(platform.url)).calls;
    const d2 = await wrk(api, paidCounting, { timeout: '10s' });
    const d2Calls = (await platformStats(platform.url)).calls - d2Before;
    await daemon.stop();

    // (d1): a second daemon on the same store, the breaker effectively off; the (a) load alone and beside a
    // hanging load, in turns. Between turns one paid request is answered (the platform briefly answers again),
    // which resets the breaker's count of consecutive failures.
    console.log('(d1): the platform hanging, the breaker off, beside the (a) load ...');
    daemon = await startDaemon(daemonConfig(join(work.path, 'breaker-off.toml'), data, platform.url, 1000), 0);
    const api1 = `${daemon.url}/v2.2/entitlements`;
    await platformMode(platform.url, { delayMs: PLATFORM_DELAY_MS });
    await verify(daemon.url, '(d1) 100 open DOIs after the restart', list.open100.slice(0, 20), 'oa_platform');
    await wrk(api1, scripts.open100, { duration: WARMUP });
    await wrk(api1, scripts.paid100, { duration: WARMUP });
    const alone: Load[] = [];
    const beside: Load[] = [];
    const hanging: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await Bun.sleep(TIMEOUT_MS + 200); // calls of the last turn have timed out
      await platformMode(platform.url, { delayMs: PLATFORM_DELAY_MS });
      await verify(daemon.url, '(d1) breaker reset', [list.paid100[round]!], 'service_request');
      await platformMode(platform.url, { hang: true });
      alone.push(await wrk(api1, scripts.open100));
      const [h, b] = await Promise.all([
        wrk(api1, paidCounting, {
          threads: 1,
          connections: HANG_CONNECTIONS,
          duration: `${Number.parseInt(DURATION, 10) + 2}s`,
          timeout: '10s',
        }),
        Bun.sleep(1000).then(() => wrk(api1, scripts.open100)),
      ]);
      hanging.push(h);
      beside.push(b);
    }
    await daemon.stop();

    // (c) again with the platform taking all 100 DOIs in one call (entitlementBatch = 100): how much of (c) is
    // the number of calls
    console.log('(c) with entitlementBatch = 100 ...');
    daemon = await startDaemon(daemonConfig(join(work.path, 'batch-100.toml'), data, platform.url, undefined, 100), 0);
    const apiBatch = `${daemon.url}/v2.2/entitlements`;
    await platformMode(platform.url, { delayMs: PLATFORM_DELAY_MS });
    await verify(daemon.url, '(c) batch 100', [list.paid100[0]!], 'service_request');
    await wrk(apiBatch, scripts.paid100, { duration: WARMUP });
    const batch100: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) batch100.push(await wrk(apiBatch, scripts.paid100));
    const c100 = median(batch100);

    // (e) the same daemon (one call per request, so a request's time is one call's plus ours) against a platform
    // answering as GetFTR asks publishers to (mean 300 ms, p95 500 ms): the latency the daemon adds to theirs
    console.log(`(e) a platform answering in ${GETFTR_MEAN_MS} ms on average, p95 ${GETFTR_P95_MS} ms ...`);
    await platformMode(platform.url, { meanMs: GETFTR_MEAN_MS, p95Ms: GETFTR_P95_MS });
    await wrk(apiBatch, scripts.paid100, { duration: WARMUP });
    const guideline: { load: Load; platform: PlatformStats['served'] }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await platformMode(platform.url, { meanMs: GETFTR_MEAN_MS, p95Ms: GETFTR_P95_MS }); // its figures from here
      const load = await wrk(apiBatch, scripts.paid100, { duration: GUIDELINE_DURATION });
      guideline.push({ load, platform: (await platformStats(platform.url)).served });
    }
    await daemon.stop();
    const platformFinal = await platformStats(platform.url);
    await platform.stop();
    console.log('(f) entries by metadata, a Crossref answering in 50 ms ...');
    const lookup = await lookupScenario(work.path);

    const oa = results.open100;
    const d1Alone = median(alone);
    const d1Beside = median(beside);
    const d1Hang = {
      requests: hanging.reduce((n, l) => n + l.requests, 0),
      minMs: Math.min(...hanging.map((l) => l.minMs)),
      maxMs: Math.max(...hanging.map((l) => l.maxMs)),
      p50Ms: median(hanging).p50Ms,
      p99Ms: Math.max(...hanging.map((l) => l.p99Ms)),
      errors: hanging.reduce((n, l) => n + l.errors, 0),
      entries504: hanging.reduce((n, l) => n + l.entries504, 0),
      entries200: hanging.reduce((n, l) => n + l.entries200, 0),
    };
    const limitMs = TIMEOUT_MS + 100;

    console.log(
      `\nEntitlement API: ${fmt(live)} live holdings; wrk -t2 -c${CONNECTIONS} -d${DURATION} on 127.0.0.1 (client and servers share the 2 cores), ${ROUNDS} runs per server taken in turns, median shown`,
    );
    console.log(
      `pools: ${fmt(pools.open.length)} open DOIs (all platforms), ${fmt(pools.paid.length)} paid DOIs of ${PAID_PLATFORM}; every prepared body was asked once and answered as its scenario needs (${fmt(verifiedCalls)} platform calls)`,
    );
    console.log(
      `loopback platform (${PAID_PLATFORM}): answers in ${PLATFORM_DELAY_MS} ms; time-out ${TIMEOUT_MS} ms, batch 20, concurrency ${CONCURRENCY}; ${fmt(callsPerPaidRequest, 2)} calls per (c) request; ${platformFinal.unauthorized} calls without a Bearer token`,
    );
    console.log(
      `reply sizes: 1 open DOI ${fmt(Bun.file(reply.open1).size)} bytes, 100 open DOIs ${fmt(Bun.file(reply.open100).size)} bytes, 100 paid DOIs ${fmt(Bun.file(reply.paid100).size)} bytes (the same-size ceilings return these)\n`,
    );
    const label = {
      open100: '(a) 100 open DOIs',
      open1: '(b) 1 open DOI',
      paid100: `(c) 100 paid DOIs, platform ${PLATFORM_DELAY_MS} ms`,
    };
    for (const [name, r] of Object.entries(runs))
      console.log(
        `${label[name as keyof typeof label]}, every run's req/s: daemon ${r.api.map((l) => fmt(l.rps)).join(', ')}; tiny ${name === 'paid100' ? 'as (a)' : r.tiny.map((l) => fmt(l.rps)).join(', ')}; same-size ${r.same.map((l) => fmt(l.rps)).join(', ')}${r.calls.length ? `; same calls ${r.calls.map((l) => fmt(l.rps)).join(', ')}; same calls by socket ${r.socket.map((l) => fmt(l.rps)).join(', ')}` : ''}`,
      );
    console.log(
      `(d1) (a) alone on the second daemon, every run's req/s: ${alone.map((l) => fmt(l.rps)).join(', ')}; beside the hanging load: ${beside.map((l) => fmt(l.rps)).join(', ')}`,
    );
    // where a ratio's gap is: the server's own CPU per request (a server runs its requests on one thread, so its
    // req/s is about 1 s over that), and what the machine left idle (a slower server leaves wrk's core idle part of
    // the time, and an answer then wakes an idle core, which costs the sender's system time)
    const cpu = (l: Load | undefined) =>
      l?.cpu
        ? `${fmt(l.cpu.userUs + l.cpu.sysUs, 1)} µs (user ${fmt(l.cpu.userUs, 1)}, system ${fmt(l.cpu.sysUs, 1)}), idle ${fmt(l.cpu.idleCores, 2)} cores`
        : '—';
    for (const [name, r] of Object.entries(results))
      console.log(
        `${label[name as keyof typeof label]}, each server's CPU per request in its median run: daemon ${cpu(r.api)}; ${name === 'paid100' ? `same calls ${cpu(r.calls)}; same calls by socket ${cpu(r.socket)}` : `tiny ${cpu(r.tiny)}`}; same-size ${cpu(r.same)}`,
      );
    console.log('');
    const c = (l: Load) => `${fmt(l.rps)} (${fmt(l.p50Ms, 2)}, ${fmt(l.p99Ms, 2)})`;
    console.log(
      '| body | daemon req/s | p50 ms | p99 ms | errors (all runs) | ceiling, tiny reply: req/s (p50, p99) | ratio | ceiling, same-size reply: req/s (p50, p99) | ratio | target | result |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
    const a = results.open100;
    const b = results.open1;
    const cc = results.paid100;
    const row = (name: keyof typeof kinds, target: string, ok?: boolean) => {
      const { api, tiny, same } = results[name];
      console.log(
        `| ${label[name]} | ${fmt(api.rps)} | ${fmt(api.p50Ms, 2)} | ${fmt(api.p99Ms, 2)} | ${api.errors} | ${c(tiny)}${name === 'paid100' ? ', as (a)' : ''} | ${fmt(api.rps / tiny.rps, 2)} | ${c(same)} | ${fmt(api.rps / same.rps, 2)} | ${target} | ${ok === undefined ? '—' : met(ok)} |`,
      );
    };
    row('open100', '>= 0.45 of the same-size ceiling', a.api.rps / a.same.rps >= 0.45 && a.api.errors === 0);
    row('open1', '>= 0.70 of the tiny-reply ceiling', b.api.rps / b.tiny.rps >= 0.7 && b.api.errors === 0);
    // (c)'s target (p99 <= 5 + 20 ms) is retired (issue 51): a bare server making the same calls misses it here;
    // (e) measures what matters, the latency added to a platform's
    row('paid100', 'none (retired; see (e))');
    const cc100 = cc.calls!;
    console.log(
      `| (c) ceiling making the same calls: a bare Bun server, 5 fetches of 20 DOIs per request, each answer parsed, the saved reply (bench/lib/paid-ceiling-server.ts) | ${fmt(cc100.rps)} | ${fmt(cc100.p50Ms, 2)} | ${fmt(cc100.p99Ms, 2)} | | | | | | the daemon's req/s ${fmt(cc.api.rps / cc100.rps, 2)} of it, p99 ${fmt(cc.api.p99Ms / cc100.p99Ms, 2)} x | — |`,
    );
    const ccSocket = cc.socket!;
    console.log(
      `| (c) ceiling making the same calls over a bare socket client: the same server, Bun.connect instead of fetch (no TLS, time-outs or error handling: bench/lib/paid-ceiling-server.ts) | ${fmt(ccSocket.rps)} | ${fmt(ccSocket.p50Ms, 2)} | ${fmt(ccSocket.p99Ms, 2)} | ${ccSocket.errors} | | | | | the daemon's req/s ${fmt(cc.api.rps / ccSocket.rps, 2)} of it, p99 ${fmt(cc.api.p99Ms / ccSocket.p99Ms, 2)} x | — |`,
    );
    console.log(
      `| (c) the same, entitlementBatch = 100 (1 call per request) | ${fmt(c100.rps)} | ${fmt(c100.p50Ms, 2)} | ${fmt(c100.p99Ms, 2)} | ${batch100.reduce((n, l) => n + l.errors, 0)} | | | | | none (retired) | — |`,
    );

    const added = guideline.map((g) => ({
      p50: g.load.p50Ms - g.platform.p50Ms,
      p99: g.load.p99Ms - g.platform.p99Ms,
    }));
    const addedP99 = [...added.map((a) => a.p99)].sort((a, b) => a - b)[added.length >> 1]!;
    console.log(
      "\n| (e) platform at GetFTR's guideline | requests | req/s | daemon p50 ms | daemon p99 ms | platform p50 ms | platform p99 ms | added p50 ms | added p99 ms | errors | target | result |",
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
    guideline.forEach((g, i) =>
      console.log(
        `| run ${i + 1}: 100 paid DOIs, 1 call each (batch 100), ${CONNECTIONS} connections, ${GUIDELINE_DURATION} | ${fmt(g.load.requests)} | ${fmt(g.load.rps)} | ${fmt(g.load.p50Ms, 1)} | ${fmt(g.load.p99Ms, 1)} | ${fmt(g.platform.p50Ms, 1)} | ${fmt(g.platform.p99Ms, 1)} | ${fmt(added[i]!.p50, 1)} | ${fmt(added[i]!.p99, 1)} | ${g.load.errors} | added p99 <= 10 ms | ${i === guideline.length - 1 ? `median run ${fmt(addedP99, 1)} ms: ${met(addedP99 <= 10)}` : ''} |`,
      ),
    );

    console.log(
      '\n| (d) platform hanging | requests | req/s | p50 ms | p99 ms | max ms | min ms | errors | entries 504 / 200 | reference | target | result |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |');
    console.log(
      `| (d1) 100 paid DOIs, breaker off, ${HANG_CONNECTIONS} connections (${ROUNDS} runs) | ${fmt(d1Hang.requests)} | — | ${fmt(d1Hang.p50Ms, 2)} | ${fmt(d1Hang.p99Ms, 2)} | ${fmt(d1Hang.maxMs, 2)} | ${fmt(d1Hang.minMs, 2)} | ${d1Hang.errors} | ${fmt(d1Hang.entries504)} / ${fmt(d1Hang.entries200)} | time-out ${TIMEOUT_MS} ms${d1Hang.minMs < TIMEOUT_MS ? ' (min < time-out: the breaker opened, or calls failed early)' : ''} | max <= ${limitMs} ms | ${met(d1Hang.maxMs <= limitMs && d1Hang.errors === 0)} |`,
    );
    console.log(
      `| (d1) 100 open DOIs beside it, ${CONNECTIONS} connections | ${fmt(d1Beside.requests)} | ${fmt(d1Beside.rps)} | ${fmt(d1Beside.p50Ms, 2)} | ${fmt(d1Beside.p99Ms, 2)} | ${fmt(d1Beside.maxMs, 2)} | ${fmt(d1Beside.minMs, 2)} | ${beside.reduce((n, l) => n + l.errors, 0)} | — | (a) alone on the same daemon: ${fmt(d1Alone.rps)} req/s, ratio ${fmt(d1Beside.rps / d1Alone.rps, 2)} (the (a) row: ${fmt(oa.api.rps)}, ratio ${fmt(d1Beside.rps / oa.api.rps, 2)}) | >= 0.80 of (a) alone | ${met(d1Beside.rps / d1Alone.rps >= 0.8)} |`,
    );
    console.log(
      `| (d2) 100 paid DOIs, breaker on (defaults), ${CONNECTIONS} connections | ${fmt(d2.requests)} | ${fmt(d2.rps)} | ${fmt(d2.p50Ms, 2)} | ${fmt(d2.p99Ms, 2)} | ${fmt(d2.maxMs, 2)} | ${fmt(d2.minMs, 2)} | ${d2.errors} | ${fmt(d2.entries504)} / ${fmt(d2.entries200)} | ${fmt(d2Calls)} platform calls, time-out ${TIMEOUT_MS} ms | max <= ${limitMs} ms | ${met(d2.maxMs <= limitMs && d2.errors === 0)} |`,
    );
    printLookup(lookup);
  } finally {
    await stopAll();
    work.remove();
  }
}
