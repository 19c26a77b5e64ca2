/**
 * Push alerts at scale (issue 53): SUBS subscriptions (default 1,000) each watching DOIS DOIs (default 20,000: 20M
 * watch entries), 50 of them among the 5,000 works an import then changes (each changed work watched by SUBS / 100
 * subscriptions). The feed is followed and the deliveries sent by the daemon's delivery process (this program again,
 * under SCHED_IDLE and nice 19, as the daemon runs it). Prints the time to add the watch lists (through
 * Webhooks.changeWatch, 10,000 a call as the API takes them), this process's anonymous RSS before and after (the
 * lists live in LMDB, not in memory), and the time from the import's commit to the last of SUBS × 50 deliveries to a
 * loopback receiver (another process) answering each after 20 ms, with the peak anonymous RSS of both processes
 * meanwhile. Target: <= 30 s. Then the Updates API of this process (wrk, 50 connections, 10-DOI bodies) alone, and
 * while a second import's SUBS × 50 deliveries run (the events gathered while every subscription was paused, then
 * every subscription resumed): the rate kept (target >= 0.9). WEBHOOK_BENCH_SUBS and WEBHOOK_BENCH_DOIS make it
 * smaller.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createApp, startServer } from '../src/http/index.ts';
import { Store } from '../src/store/index.ts';
import { importUpdates } from '../src/updates/index.ts';
import { DELIVERY_CHILD_ARG, Webhooks } from '../src/webhooks/index.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { RW_CSV_HEAD } from '../test/support/update-imports.ts';
import { startWrk, stopLoads, wrk, wrkScript } from './lib/updates-load.ts';

const SUBS = Number(process.env.WEBHOOK_BENCH_SUBS ?? 1000);
const DOIS = Number(process.env.WEBHOOK_BENCH_DOIS ?? 20_000);
const CHANGED = 5_000;
const WATCHED_CHANGED = 50;
const RECEIVER_MS = 20;
/** the delivery process's priority: the daemon's default, unless these say otherwise (to compare) */
const NICE = Number(process.env.WEBHOOK_BENCH_NICE ?? 19);
const IDLE = (process.env.WEBHOOK_BENCH_IDLE ?? 'true') === 'true';
/** the longest the Updates API is loaded while the deliveries run */
const LOADED_MS = 60_000;

/** Anonymous resident memory of a process (MiB): the heap and native allocations, not LMDB's mapped file. */
function rssAnonMiB(pid: number | 'self' = 'self'): number {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The delivery process this process started. */
function deliveryProcess(): number {
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(DELIVERY_CHILD_ARG))
        return Number(name);
    } catch {
      // ended while read
    }
  }
  throw new Error('no delivery process');
}

const work = tempDir('doi-holdings-bench-webhooks-');
// the receivers stand in for integrators' own machines: at nice 19, so that on this machine their CPU is not
// counted against the daemon's
const receiver = Bun.spawn(
  [
    'nice',
    '-n',
    '19',
    process.execPath,
    '-e',
    `let n = 0;
     const s = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 60, async fetch(r) {
       if (r.method === 'GET') return new Response(String(n));
       await r.arrayBuffer();
       await Bun.sleep(${RECEIVER_MS});
       n++;
       return new Response(null, { status: 204 });
     } });
     console.log(s.port);`,
  ],
  { stdout: 'pipe', stderr: 'inherit' },
);
const reader = receiver.stdout.getReader();
const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
const store = Store.open(work.path, 'production', { mapSizeBytes: 4 * 1024 ** 3 });
// the daemon's way (daemon.ts openWebhooks): the delivery process at the default priority
const hooks = new Webhooks(
  { store: { ...store.opened, env: store.env }, nice: 19, idle: true },
  {
    path: `${work.path}/webhooks`,
    mapSizeBytes: 64 * 1024 ** 3,
    pollMs: 100,
    keepEventsMs: 30 * 86_400_000,
    allowHttp: true,
    allowPrivateTargets: true,
    concurrency: 64,
    // one integrator stands for the 1,000 subscriptions' many: its share is the whole pool
    perIntegratorConcurrency: 64,
    maxSubscriptionsPerIntegrator: 1_000_000,
    timeoutMs: 10_000,
    retryBaseMs: 100,
    retryMaxMs: 1_000,
    retryForMs: 3 * 86_400_000,
  },
);
try {
  hooks.start();
  await hooks.deliveries.running; // it has read the feed: the import below is news, not history
  const child = deliveryProcess();
  const changed = (i: number) => `10.9999/changed.${i}`;
  console.log(
    `\nPush alerts: ${SUBS} subscriptions x ${DOIS.toLocaleString('en')} watched DOIs, ${CHANGED} works changed (delivery process at nice ${NICE}${IDLE ? ', SCHED_IDLE' : ''})`,
  );
  const rssBefore = rssAnonMiB();
  const t0 = performance.now();
  for (let s = 0; s < SUBS; s++) {
    const made = await hooks.create('bench', { url: `http://127.0.0.1:${port}/hook/${s}` });
    if ('code' in made) throw new Error(made.message);
    const dois: string[] = [];
    for (let j = 0; j < WATCHED_CHANGED; j++) dois.push(changed((s * WATCHED_CHANGED + j) % CHANGED));
    for (let k = dois.length; k < DOIS; k++) dois.push(`10.9999/w${s}.${k}`);
    for (let at = 0; at < dois.length; at += 10_000) {
      const r = hooks.changeWatch('bench', made.view.id, dois.slice(at, at + 10_000), true);
      if ('code' in r) throw new Error(r.message);
    }
  }
  const addSeconds = (performance.now() - t0) / 1000;
  Bun.gc(true);
  const rssAfter = rssAnonMiB();
  const entries = SUBS * DOIS;
  console.log(
    `  watch lists: ${entries.toLocaleString('en')} entries added in ${addSeconds.toFixed(1)} s (${Math.round(entries / addSeconds).toLocaleString('en')}/s)`,
  );
  console.log(`  anonymous RSS: ${rssBefore.toFixed(0)} MiB before the lists, ${rssAfter.toFixed(0)} MiB after`);

  const rows = (nature: string, from: number) =>
    Array.from(
      { length: CHANGED },
      (_, i) => `${from + i},${changed(i)},10.9999/${nature}.${i},9/1/2020 0:00,${nature},+Plagiarism;,`,
    );
  /** a Retraction Watch snapshot of these rows: the whole database, as a dropped file is */
  const importRows = async (list: string[]) => {
    async function* csv() {
      yield Buffer.from(`${[RW_CSV_HEAD, ...list].join('\n')}\n`);
    }
    const imported = await importUpdates([store], 'retraction-watch-csv', csv());
    if ('code' in imported) throw new Error(imported.message);
  };
  const received = async () => Number(await (await fetch(`http://127.0.0.1:${port}/count`)).text());
  await importRows(rows('Retraction', 900_000));
  const expected = SUBS * WATCHED_CHANGED;
  let [peak, childPeak] = [rssAnonMiB(), rssAnonMiB(child)];
  const t1 = performance.now();
  hooks.poll();
  for (;;) {
    [peak, childPeak] = [Math.max(peak, rssAnonMiB()), Math.max(childPeak, rssAnonMiB(child))];
    if ((await received()) >= expected && hooks.deliveries.active === 0) break;
    await Bun.sleep(100);
  }
  const seconds = (performance.now() - t1) / 1000;
  const outcomes = Object.fromEntries(hooks.deliveries.outcomes);
  console.log(
    `  import -> every event delivered: ${expected.toLocaleString('en')} deliveries in ${seconds.toFixed(1)} s (${Math.round(expected / seconds)}/s); target <= 30 s`,
  );
  console.log(
    `  outcomes ${JSON.stringify(outcomes)}; anonymous RSS peak during deliveries ${peak.toFixed(0)} MiB here, ${childPeak.toFixed(0)} MiB in the delivery process`,
  );

  // the Updates API of this process, alone and while every subscription replays all its events
  const KEY = 'bench-key-00001';
  const app = createApp({
    integrators: [{ name: 'bench', apiKey: KEY, updates: true, cache: true, counter: false }],
    maxBodyBytes: 65_536,
    envs: { production: { store } },
    health: () => ({ ok: true, checks: {} }),
    version: 'bench',
  });
  const server = startServer(app, '127.0.0.1', 0);
  try {
    const bodies = Array.from({ length: 200 }, (_, b) =>
      JSON.stringify({ dois: Array.from({ length: 10 }, (_, k) => changed((b * 10 + k) % CHANGED)) }),
    );
    const script = wrkScript(`${work.path}/updates.lua`, bodies, KEY);
    const url = `${server.url}/v2.2/updates`;
    // the second import's events gather while every subscription is paused; resumed under load, they are sent
    const ids = hooks.list('bench').map((v) => v.id);
    for (const id of ids) hooks.setPaused('bench', id, true);
    await importRows([...rows('Retraction', 900_000), ...rows('Correction', 950_000)]);
    hooks.poll();
    const pending = () => hooks.figures().reduce((n, f) => n + f.pending, 0);
    while (pending() < expected) await Bun.sleep(100);
    // alone: the same store, the same answers (each work now with its correction), no delivery; again after
    await wrk(url, script, '2s'); // warm
    const aloneBefore = await wrk(url, script, '10s');
    const before = await received();
    // resumed before the load starts: 1,000 resumes at once are 1,000 synced commits on this thread (seconds), which
    // integrators' calls spread out would not be
    const resumedAt = performance.now();
    for (const id of ids) hooks.setPaused('bench', id, false);
    const resumeMs = performance.now() - resumedAt;
    const load = startWrk(url, script);
    const t2 = performance.now();
    // at most LOADED_MS under load: a delivery process that yields all the CPU to a saturating load starves
    const loadedUntil = t2 + LOADED_MS;
    let underLoad = 0;
    while (performance.now() < loadedUntil) {
      underLoad = (await received()) - before;
      if (underLoad >= expected && hooks.deliveries.active === 0) break;
      await Bun.sleep(100);
    }
    const loadedSeconds = (performance.now() - t2) / 1000;
    const during = await load.stop();
    while ((await received()) < before + expected || hooks.deliveries.active > 0) await Bun.sleep(100);
    const allSeconds = (performance.now() - resumedAt) / 1000;
    const aloneAfter = await wrk(url, script, '10s');
    const alone = { rps: (aloneBefore.rps + aloneAfter.rps) / 2, p99Ms: aloneBefore.p99Ms };
    console.log(
      `  Updates API (10 DOIs a request): ${Math.round(alone.rps)} req/s alone (${Math.round(aloneBefore.rps)} before, ${Math.round(aloneAfter.rps)} after), ${Math.round(during.rps)} req/s while deliveries ran: ${(during.rps / alone.rps).toFixed(2)} of its rate; target >= 0.9 (p99 ${alone.p99Ms} -> ${during.p99Ms} ms)`,
    );
    console.log(
      `  deliveries under that load: ${underLoad.toLocaleString('en')} of ${expected.toLocaleString('en')} in ${loadedSeconds.toFixed(1)} s (${Math.round(underLoad / loadedSeconds)}/s); all of them ${allSeconds.toFixed(1)} s after the resume (1,000 resumes: ${(resumeMs / 1000).toFixed(1)} s)`,
    );
  } finally {
    await stopLoads();
    await server.stop();
  }
} finally {
  await hooks.close();
  await store.close();
  receiver.kill();
  work.remove();
}
