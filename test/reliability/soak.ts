/**
 * The soak (`make soak`; docs/reliability.md, "Soak"): the real daemon under mixed Updates / Entitlement / status
 * page load on 127.0.0.1 for SOAK_SECONDS (default 600) while deposit files and update imports arrive. It fails
 * (exit 1) on any 5xx or unexpected status, a deposit file or import not applied, or RSS after warm-up growing
 * more than 10%; it prints p99 latency per minute and the RSS figures. Not run by `make test` (it takes minutes).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUN, REPO, runCli, seeded, tempDir, waitFor, writeDeposit } from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';
import { HEADER, ROWS } from '../support/rw-sample.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000);
const WARMUP_MS = SECONDS * 200; // the first 20% of the run: caches fill and the heap finds its size
const WORKERS = 6;
const DEPOSIT_EVERY_MS = 10_000;
const KEY = 'soak-key-0001';
const OPEN = Array.from({ length: 20_000 }, (_, i) => `10.5555/soak.open.${i}`);
const PAID = Array.from({ length: 5_000 }, (_, i) => `10.5555/soak.paid.${i}`);
/** A CSV line's fields (the sample has no quoted line breaks). */
const fields = (line: string): string[] =>
  [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map((m) => m[1]?.replaceAll('""', '"') ?? m[2] ?? '');
const ORIGINAL_DOI = HEADER.split(',').indexOf('OriginalPaperDOI');
const RW_DOIS = ROWS.map((r) => fields(r)[ORIGINAL_DOI]!).filter((d) => d.startsWith('10.'));

const rand = seeded(SEED);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
const failures: string[] = [];
const fail = (what: string) => {
  if (failures.length < 20) console.error(`FAIL ${what}`);
  failures.push(what);
};

// ---- the daemon and its inputs --------------------------------------------------------------------------------
const dir = tempDir('doi-holdings-soak-');
const bucket = join(dir.path, 'bucket');
const drop = join(dir.path, 'updates');
const platform = new PlatformServer('soak-secret');
platform.mode = { kind: 'answer', entitled: (doi) => (Number(doi.split('.').pop()) % 3 === 0 ? 'no' : 'yes') };
writeFileSync(
  join(dir.path, 'soak.toml'),
  `[server]
listen = "127.0.0.1:0"
[store]
dir = "db"
mapSizeGiB = 2
[buckets.production]
kind = "local"
path = "bucket"
[updates]
dropDir = "updates"
[[platforms]]
name = "acme"
[[platforms]]
name = "paidco"
entitlementUrl = "${platform.url}"
entitlementSecretEnv = "PAIDCO_SECRET"
[[integrators]]
name = "soak"
apiKey = "${KEY}"
updates = true
`,
);
let depositFiles = 0;
let mtime = 1_700_000_000;
const deposit = (platformName: string, lines: object[]) => {
  writeDeposit(bucket, platformName, lines, { mtime: mtime++ });
  depositFiles++;
};
for (let f = 0; f < 4; f++)
  deposit(
    'acme',
    OPEN.slice(f * 5000, (f + 1) * 5000).map((doi) => ({
      doi,
      accessType: 'open',
      vor: [{ url: `https://acme.example/${doi}.pdf`, contentType: 'application/pdf' }],
    })),
  );
deposit(
  'paidco',
  PAID.map((doi) => ({ doi, accessType: 'paid' })),
);

const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--config', join(dir.path, 'soak.toml')], {
  cwd: REPO,
  env: { ...process.env, PAIDCO_SECRET: 'soak-secret' },
  stdout: 'ignore',
  stderr: 'pipe',
});
let log = '';
void (async () => {
  for await (const c of proc.stderr) log += new TextDecoder().decode(c);
})();
const events = (name: string) => log.split('\n').filter((l) => l.includes(`"event":"${name}"`));

async function stopEverything(): Promise<void> {
  proc.kill('SIGTERM');
  await proc.exited;
  await platform.stop();
  dir.remove();
}
process.on('SIGINT', () => void stopEverything().then(() => process.exit(130)));

const base = await waitFor(
  () => /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(log)?.[1],
  'the daemon to listen',
  60_000,
);
await waitFor(() => events('file.applied').length === depositFiles, 'the first deposits', 120_000);
writeFileSync(join(drop, 'rw-1.csv'), `${HEADER}\n${ROWS.slice(0, 2000).join('\n')}\n`);
await waitFor(() => events('updates.imported').length === 1, 'the first update import', 60_000);
console.log(
  `soak: ${SECONDS} s, seed ${SEED} (SOAK_SEED to replay), ${WORKERS} workers, daemon pid ${proc.pid}, ${base}`,
);

// ---- load ------------------------------------------------------------------------------------------------------
type Kind = 'updates' | 'entitlements' | 'status';
const latencies: Record<Kind, number[]>[] = [];
const statusCounts = new Map<string, number>();
const startedAt = performance.now();
const minute = () => Math.floor((performance.now() - startedAt) / 60_000);
let stopLoad = false;

async function once(kind: Kind): Promise<void> {
  const t0 = performance.now();
  let r: Response;
  let expected: number[];
  if (kind === 'status') {
    const doi = rand() < 0.8 ? pick(RW_DOIS) : pick(OPEN);
    r = await fetch(`${base}/doi/${encodeURIComponent(doi)}${rand() < 0.5 ? '?format=json' : ''}`);
    expected = [200, 404];
  } else {
    const n = kind === 'updates' ? 1 + Math.floor(rand() * 100) : 1 + Math.floor(rand() * 20);
    const dois = Array.from({ length: n }, () => {
      const x = rand();
      return x < 0.4
        ? pick(RW_DOIS)
        : x < 0.7
          ? pick(OPEN)
          : x < 0.95
            ? pick(PAID)
            : `10.5555/unknown.${Math.floor(rand() * 1e6)}`;
    });
    r = await fetch(`${base}/v2.2/${kind}`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ dois }),
    });
    expected = [200];
  }
  await r.arrayBuffer();
  const ms = performance.now() - t0;
  (latencies[minute()] ??= { updates: [], entitlements: [], status: [] })[kind].push(ms);
  const key = `${kind} ${r.status}`;
  statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);
  if (!expected.includes(r.status)) fail(`${kind}: status ${r.status}`);
}

async function worker(): Promise<void> {
  while (!stopLoad) {
    const x = rand();
    await once(x < 0.4 ? 'updates' : x < 0.8 ? 'entitlements' : 'status').catch((e) => fail(`request failed: ${e}`));
  }
}

// every page and every answer once, so the caches are full before the warm-up ends
for (const doi of RW_DOIS) await fetch(`${base}/doi/${encodeURIComponent(doi)}`).then((r) => r.arrayBuffer());
for (let i = 0; i < PAID.length; i += 20)
  await fetch(`${base}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ dois: PAID.slice(i, i + 20) }),
  });

// ---- arrivals: a deposit file every 10 s (updates, removals, re-adds of the same DOIs) and a second import -----
const removed = new Set<string>();
async function arrivals(): Promise<void> {
  let secondImportDone = false;
  while (!stopLoad) {
    await Bun.sleep(DEPOSIT_EVERY_MS);
    if (stopLoad) break;
    const lines = Array.from({ length: 1000 }, () => {
      const doi = pick(OPEN);
      if (removed.has(doi) || rand() < 0.8) {
        removed.delete(doi);
        return {
          doi,
          accessType: pick(['open', 'free', 'permFree']),
          vor: [{ url: `https://acme.example/${doi}/${mtime}.pdf`, contentType: 'application/pdf' }],
        };
      }
      removed.add(doi);
      return { doi, deleted: true };
    });
    deposit('acme', lines);
    if (!secondImportDone && performance.now() - startedAt > (SECONDS * 1000) / 2) {
      writeFileSync(join(drop, 'rw-2.csv'), `${HEADER}\n${ROWS.join('\n')}\n`);
      secondImportDone = true;
    }
  }
}

// ---- RSS ---------------------------------------------------------------------------------------------------------
// RssAnon is the process's own memory (where a leak shows); RssFile is the store's pages mapped in as they are read
const rss: { at: number; kib: number; anon: number; file: number }[] = [];
const sample = () => {
  const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  rss.push({ at: performance.now() - startedAt, kib: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') });
};
const sampler = setInterval(sample, 5_000);

// ---- per-minute report -----------------------------------------------------------------------------------------
const p99 = (xs: number[]) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!.toFixed(1) : '-';
let reported = 0;
/** The daemon's own view of its memory (prom-client's process figures): the JS heap in use and memory held outside it. */
async function heapFigures(): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mb = (name: string) =>
    Math.round(Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1]) / 1048576);
  return `heap used ${mb('nodejs_heap_size_used_bytes')} MiB, external ${mb('nodejs_external_memory_bytes')} MiB`;
}
const reporter = setInterval(async () => {
  const heap = reported < minute() ? await heapFigures().catch((e) => String(e)) : '';
  for (; reported < minute(); reported++) {
    const m = latencies[reported] ?? { updates: [], entitlements: [], status: [] };
    const n = m.updates.length + m.entitlements.length + m.status.length;
    console.log(
      `minute ${reported + 1}: ${n} requests, p99 ms updates ${p99(m.updates)}, entitlements ${p99(m.entitlements)}, status ${p99(m.status)}; RSS ${Math.round((rss.at(-1)?.kib ?? 0) / 1024)} MiB (anon ${Math.round((rss.at(-1)?.anon ?? 0) / 1024)}, file ${Math.round((rss.at(-1)?.file ?? 0) / 1024)}); files applied ${events('file.applied').length}/${depositFiles}; ${heap}`,
    );
  }
}, 1_000);

const workers = Array.from({ length: WORKERS }, () => worker());
const arriving = arrivals();
await Bun.sleep(SECONDS * 1000);
stopLoad = true;
await Promise.all(workers);
await arriving;
clearInterval(sampler);

// ---- the verdict -----------------------------------------------------------------------------------------------
await waitFor(() => events('file.applied').length >= depositFiles, 'every deposit file applied', 120_000).catch(() =>
  fail(`deposit files applied: ${events('file.applied').length} of ${depositFiles}`),
);
const imports = (SECONDS * 1000) / 2 < DEPOSIT_EVERY_MS ? 1 : 2;
await waitFor(() => events('updates.imported').length >= imports, 'the update imports', 120_000).catch(() =>
  fail(`update imports: ${events('updates.imported').length} of ${imports}`),
);
for (const bad of [
  'file.quarantined',
  'file.conflict',
  'http.server_error',
  'updates.import_failed',
  'entitlement.index_build_failed',
])
  if (events(bad).length) fail(`${events(bad).length} ${bad} log lines, first: ${events(bad)[0]}`);
const failed = await runCli(['--failures', '--config', join(dir.path, 'soak.toml')]);
if (failed.lines.length) fail(`--failures lists ${failed.lines.length}: ${failed.lines[0]}`);
clearInterval(reporter);
for (; reported <= minute() && latencies[reported]; reported++) {
  const m = latencies[reported]!;
  console.log(
    `minute ${reported + 1} (part): p99 ms updates ${p99(m.updates)}, entitlements ${p99(m.entitlements)}, status ${p99(m.status)}`,
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
// medians over a minute (or a fifth of the run if shorter): a single sample moves with each garbage collection
const windowMs = Math.min(60_000, SECONDS * 200);
const after = rss.filter((s) => s.at >= WARMUP_MS);
const baseline = median(after.filter((s) => s.at < WARMUP_MS + windowMs).map((s) => s.kib));
const final = median(after.filter((s) => s.at >= SECONDS * 1000 - windowMs).map((s) => s.kib));
const peak = Math.max(...after.map((s) => s.kib));
const growth = final / baseline - 1;
console.log(
  `RSS after warm-up (${WARMUP_MS / 1000} s): ${Math.round(baseline / 1024)} MiB; at the end ${Math.round(final / 1024)} MiB (${(growth * 100).toFixed(1)}%); peak ${Math.round(peak / 1024)} MiB`,
);
if (!(growth <= 0.1)) fail(`RSS grew ${(growth * 100).toFixed(1)}% after warm-up (limit 10%)`);
console.log(
  `statuses: ${[...statusCounts].map(([k, n]) => `${k}: ${n}`).join(', ')}; platform calls ${platform.calls.length}; deposit files ${depositFiles}`,
);
const fives = [...statusCounts].filter(([k]) => Number(k.split(' ')[1]) >= 500).reduce((a, [, n]) => a + n, 0);
console.log(`5xx: ${fives}`);

await stopEverything();
if (failures.length) {
  console.error(`soak FAILED: ${failures.length} problem(s)`);
  process.exit(1);
}
console.log('soak passed');
