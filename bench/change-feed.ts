/**
 * Change feed and private lookup benchmark (issue 22). A fresh store of 300,000 works with updates is built in
 * this process (Store.beginUpdatesImport as a Retraction Watch snapshot import: the rows are the 3,000-row
 * sample's works, copy n of each with `.n<n>` appended to its DOI and notice DOI, as bench/lib/rw-csv.ts does,
 * so the updates are real ones), timed as rows into the scratch space and the one commit that merges them and
 * writes the change feed. Then the real daemon (its own process) serves that store, and over HTTP on 127.0.0.1:
 *   1. a full sync: GET /v2.2/updates/changes?limit=1000 from the start, each page's `next` passed on, until
 *      `more` is false; every work must come exactly once (300,000 distinct DOIs) or the bench stops. Run twice:
 *      the first run (the route cold) is the figure, the second is shown beside it;
 *   2. the empty incremental poll (the last `next`, nothing new) under wrk (2 threads, 50 connections, 5 s runs
 *      after a 2 s warm-up, three runs per server taken in turns, median shown), beside the tiny-reply
 *      ceilings measured in the same turns: a bare Bun server answering a GET with a fixed reply of the poll's
 *      size (bench/lib/get-ceiling-server.ts; the target's ratio is taken against it), and the other benchmarks'
 *      ceiling (bench/ceiling-server.ts: a POST of one DOI whose body it parses), for reference; and the
 *      daemon's floor on the same route (limit=0: a 400 after the key check, before the store is read), which
 *      tells the daemon's per-request cost from the poll's own;
 *   3. the prefix list: the first GET (its index read on a worker as the daemon started; a /healthz sent
 *      meanwhile shows whether the daemon answers), the first GET after works were added by another process
 *      (the last list while the index is read again on a worker; when the new list is served), bytes on the wire with and
 *      without gzip, the download time with gzip, and the conditional GET (If-None-Match: 304) one at a time
 *      and under wrk in the same turns as 2; and one POST /v2.2/updates/by-prefix as a check that a work is found
 *      by its hash prefix.
 * Prints each figure beside its issue 22 target.
 */
import { createReadStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { doiKey } from '../src/doi/index.ts';
import { Store, storeFileIn } from '../src/store/index.ts';
import { keyHash } from '../src/store/updates/index.ts';
import type { ImportRow } from '../src/update-record/update-record.ts';
import { readRows } from '../src/updates/import/read-rows.ts';
import { importUpdates } from '../src/updates/index.ts';
import { syntheticWorks } from '../test/support/crossref-api.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { SAMPLE_PATH } from '../test/support/rw-sample.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt, mib } from './lib/measure.ts';
import { indexesRead, startProcess, stopAll } from './lib/processes.ts';
import { ensureWrk } from './lib/shell.ts';
import { type Load, wrk, wrkScript } from './lib/updates-load.ts';

const KEY = 'bench-key-0123456789';
const WORKS = 300_000;
const PAGE = 1000;
const MAP_GIB = 4;
const DURATION = '5s';
const WARMUP = '2s';
const ROUNDS = 3;
const CONNECTIONS = 50;
/** sequential downloads of the prefix list per encoding (after the first, which builds the index) */
const DOWNLOADS = 10;
const ORIGIN = 'retraction-watch-csv';

const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const median = (loads: Load[]) => [...loads].sort((a, b) => a.rps - b.rps)[loads.length >> 1]!;
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const mb = (bytes: number) => `${fmt(bytes / 1e6, 2)} MB`;
const listening = (out: string) => /^(http:\S+)$/m.exec(out)?.[1];
const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** A wrk script for GETs with fixed headers; done() prints the RESULT line bench/lib/updates-load.ts reads. */
function getScript(path: string, headers: Record<string, string>): string {
  writeFileSync(
    path,
    `wrk.method = "GET"
${Object.entries(headers)
  .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
  .join('\n')}
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  return path;
}

/** The sample's works, each with its rows in file order. */
async function sampleWorks(): Promise<{ doi: string; rows: ImportRow[] }[]> {
  const { updates, done } = readRows('retraction-watch-csv', createReadStream(SAMPLE_PATH));
  const byKey = new Map<string, { doi: string; rows: ImportRow[] }>();
  for await (const row of updates) {
    const key = doiKey(row.doi);
    let w = byKey.get(key);
    if (!w) byKey.set(key, (w = { doi: row.doi, rows: [] }));
    w.rows.push(row);
  }
  done();
  return [...byKey.values()];
}

/** Copy `copy` of a sample row: `.n<copy>` on the work's DOI and the notice's, a new Record ID (copy 0 is the row itself). */
function varied(row: ImportRow, doi: string, copy: number): ImportRow {
  if (copy === 0 || !row.update) return { ...row, doi } as ImportRow;
  const u = row.update;
  const updateDoi = u.updateDoi ? `${u.updateDoi}.n${copy}` : u.updateDoi;
  const urls = u.urls.map((url) =>
    u.updateDoi && url === `https://doi.org/${u.updateDoi}` ? `https://doi.org/${updateDoi}` : url,
  );
  return {
    doi,
    update: { ...u, updateDoi, urls },
    ...(row.recordId !== undefined ? { recordId: String(Number(row.recordId) + copy * 1_000_000) } : {}),
    ...(row.upsert !== undefined ? { upsert: row.upsert } : {}),
  };
}

interface Sync {
  seconds: number;
  pages: number;
  bytes: number;
  items: number;
  distinct: number;
  withoutUpdates: number;
  /** time from sending each request to its last body byte, summed */
  requestSeconds: number;
  slowestPageMs: number;
  next: string;
}

/** A full sync from the start, pages of PAGE, until `more` is false. */
async function fullSync(url: string): Promise<Sync> {
  const seen = new Set<string>();
  let after: string | undefined;
  let pages = 0;
  let bytes = 0;
  let items = 0;
  let withoutUpdates = 0;
  let requestMs = 0;
  let slowest = 0;
  const decoder = new TextDecoder();
  const t0 = performance.now();
  for (;;) {
    const t1 = performance.now();
    const res = await fetch(`${url}/v2.2/updates/changes?limit=${PAGE}${after ? `&after=${after}` : ''}`, {
      headers: { 'x-api-key': KEY },
      decompress: false,
    } as RequestInit);
    const body = new Uint8Array(await res.arrayBuffer());
    const ms = performance.now() - t1;
    if (res.status !== 200)
      throw new Error(`page ${pages + 1}: HTTP ${res.status} ${decoder.decode(body).slice(0, 300)}`);
    if (res.headers.get('content-encoding'))
      throw new Error(
        `page ${pages + 1}: content-encoding ${res.headers.get('content-encoding')} (the bytes counted would not be the JSON)`,
      );
    requestMs += ms;
    slowest = Math.max(slowest, ms);
    bytes += body.length;
    pages++;
    const page = JSON.parse(decoder.decode(body)) as {
      changes: { doi: string; updates: unknown[] }[];
      next: string;
      more: boolean;
    };
    for (const c of page.changes) {
      seen.add(doiKey(c.doi));
      if (c.updates.length === 0) withoutUpdates++;
    }
    items += page.changes.length;
    after = page.next;
    if (!page.more) break;
    if (page.changes.length === 0) throw new Error(`page ${pages}: no changes but more is true`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    seconds,
    pages,
    bytes,
    items,
    distinct: seen.size,
    withoutUpdates,
    requestSeconds: requestMs / 1000,
    slowestPageMs: slowest,
    next: after!,
  };
}

/**
 * Adds works with updates to the store from this process while the daemon serves it, through the real importer
 * (Crossref works JSON: each work's updates replaced, nothing else touched). Returns how many works got updates.
 */
async function addWorks(storeDir: string): Promise<number> {
  const store = Store.open(storeDir, 'production', { mapSizeBytes: MAP_GIB * 1024 ** 3 });
  try {
    const works = syntheticWorks(20, { days: ['2024-05-01'] });
    await importUpdates(
      [store],
      'crossref-json',
      (async function* () {
        yield Buffer.from(JSON.stringify({ message: { items: works } }));
      })(),
    );
    return works.length / 2; // the odd ones are the works with updates (their notices are the even ones)
  } finally {
    await store.close();
  }
}

await ensureWrk();
const work = tempDir('doi-holdings-bench-feed-');
try {
  // --- the store: 300,000 works with updates, one snapshot import ---
  const sample = await sampleWorks();
  const storeDir = join(work.path, 'db');
  const store = Store.open(storeDir, 'production', { mapSizeBytes: MAP_GIB * 1024 ** 3 });
  console.log(
    `building a store of ${fmt(WORKS)} works with updates from the ${fmt(sample.length)} works of the Retraction Watch sample ...`,
  );
  const keys = new Set<string>();
  let rows = 0;
  const t0 = performance.now();
  const imp = store.beginUpdatesImport(ORIGIN, 'snapshot');
  for (let j = 0; j < WORKS; j++) {
    const w = sample[j % sample.length]!;
    const copy = Math.floor(j / sample.length);
    const doi = copy === 0 ? w.doi : `${w.doi}.n${copy}`;
    const key = doiKey(doi);
    keys.add(key);
    for (const row of w.rows) {
      rows++;
      const wait = imp.add(key, varied(row, doi, copy));
      if (wait) await wait;
    }
  }
  const t1 = performance.now();
  const report = await imp.commit();
  const t2 = performance.now();
  if ('code' in report) throw new Error(`the import was refused: ${report.message}`);
  if (keys.size !== WORKS || report.worksTouched !== WORKS)
    throw new Error(
      `the import should make ${fmt(WORKS)} works: ${fmt(keys.size)} distinct DOI keys generated, ${fmt(report.worksTouched)} works touched`,
    );
  const head = store.changeFeed.head();
  await store.close();
  const build = {
    rows,
    addSeconds: (t1 - t0) / 1000,
    commitSeconds: (t2 - t1) / 1000,
    fileBytes: statSync(storeFileIn(storeDir, 'production')).size,
    head,
  };

  // --- the daemon on it ---
  const bucket = join(work.path, 'bucket');
  mkdirSync(bucket);
  const config = join(work.path, 'feed.toml');
  writeDaemonConfig(config, {
    mapSizeGiB: MAP_GIB,
    bucket,
    platforms: [{ name: 'example' }],
    apiKey: KEY,
    updates: true,
  });
  console.log('starting the daemon ...');
  const tStart = performance.now();
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
  );
  await indexesRead(daemon);
  const startSeconds = (performance.now() - tStart) / 1000;

  // --- 1. full sync, twice ---
  console.log('full sync over HTTP, twice ...');
  const syncs = [await fullSync(daemon.url), await fullSync(daemon.url)];
  for (const [i, s] of syncs.entries())
    if (s.distinct !== WORKS || s.items !== WORKS || s.withoutUpdates !== 0)
      throw new Error(
        `full sync ${i + 1} saw ${fmt(s.items)} items, ${fmt(s.distinct)} distinct DOIs, ${fmt(s.withoutUpdates)} without updates; every one of the ${fmt(WORKS)} works should come exactly once, with its updates`,
      );
  if (syncs[0]!.next !== syncs[1]!.next)
    throw new Error(`the two syncs ended at different cursors: ${syncs[0]!.next} and ${syncs[1]!.next}`);
  const sync = syncs[0]!;
  const next = sync.next;

  // the empty poll as a client sees it
  const pollUrl = `${daemon.url}/v2.2/updates/changes?after=${next}`;
  const pollRes = await fetch(pollUrl, { headers: { 'x-api-key': KEY } });
  const pollText = await pollRes.text();
  const poll = JSON.parse(pollText) as { changes: unknown[]; next: string; more: boolean };
  if (pollRes.status !== 200 || poll.changes.length !== 0 || poll.next !== next || poll.more !== false)
    throw new Error(
      `the empty poll should answer {"changes":[],"next":<the same cursor>,"more":false}: HTTP ${pollRes.status} ${pollText.slice(0, 300)}`,
    );

  // --- 3. the prefix list (before the load, so its first GET is the one that builds the index) ---
  console.log('prefix list ...');
  const prefixesUrl = `${daemon.url}/v2.2/updates/prefixes`;
  const getPrefixes = async (headers: Record<string, string>) => {
    const t = performance.now();
    const res = await fetch(prefixesUrl, {
      headers: { 'x-api-key': KEY, ...headers },
      decompress: false,
    } as RequestInit);
    const body = new Uint8Array(await res.arrayBuffer());
    return {
      ms: performance.now() - t,
      status: res.status,
      body,
      encoding: res.headers.get('content-encoding'),
      etag: res.headers.get('etag'),
    };
  };
  // a GET with a /healthz sent 100 ms into it: whether the daemon answers while the GET is served
  const getBeside = async () => {
    const get = getPrefixes({ 'accept-encoding': 'gzip' });
    await Bun.sleep(100);
    const tHealth = performance.now();
    const healthStatus = (await fetch(`${daemon.url}/healthz`)).status;
    return { ...(await get), healthStatus, healthMs: performance.now() - tHealth };
  };
  // the first GET: the index was read on a worker as the daemon started
  const first = await getBeside();
  if (first.status !== 200 || first.encoding !== 'gzip' || !first.etag)
    throw new Error(
      `GET /prefixes with gzip: HTTP ${first.status}, content-encoding ${first.encoding}, etag ${first.etag}`,
    );
  const gz: number[] = [];
  const plain: number[] = [];
  let gzBytes = first.body.length;
  let plainBody = new Uint8Array();
  for (let i = 0; i < DOWNLOADS; i++) {
    const g = await getPrefixes({ 'accept-encoding': 'gzip' });
    const p = await getPrefixes({ 'accept-encoding': 'identity' });
    if (g.status !== 200 || g.encoding !== 'gzip' || p.status !== 200 || p.encoding)
      throw new Error(`GET /prefixes: HTTP ${g.status}/${p.status}, content-encoding ${g.encoding}/${p.encoding}`);
    gz.push(g.ms);
    plain.push(p.ms);
    gzBytes = g.body.length;
    plainBody = p.body;
  }
  if (Buffer.compare(Buffer.from(Bun.gunzipSync(first.body)), Buffer.from(plainBody)) !== 0)
    throw new Error('the gzip body does not unzip to the plain one');
  const list = JSON.parse(new TextDecoder().decode(plainBody)) as {
    algorithm: string;
    of: string;
    prefixLength: number;
    works: number;
    prefixes: string[];
  };
  if (list.works !== WORKS) throw new Error(`the prefix list counts ${fmt(list.works)} works, not ${fmt(WORKS)}`);
  const etag = first.etag;
  const conditional: number[] = [];
  for (let i = 0; i < 20; i++) {
    const c = await getPrefixes({ 'accept-encoding': 'gzip', 'if-none-match': etag });
    if (c.status !== 304 || c.body.length !== 0)
      throw new Error(`If-None-Match: HTTP ${c.status}, ${c.body.length} bytes`);
    conditional.push(c.ms);
  }
  // the private lookup: one work found by the prefix of its hash
  const probeDoi = sample[0]!.doi;
  const probeHash = keyHash(doiKey(probeDoi));
  const tLookup = performance.now();
  const lookupRes = await fetch(`${daemon.url}/v2.2/updates/by-prefix`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ prefixes: [probeHash.slice(0, list.prefixLength)] }),
  });
  const lookup = (await lookupRes.json()) as { prefixLength: number; works: { hash: string; doi: string }[] };
  const lookupMs = performance.now() - tLookup;
  if (lookupRes.status !== 200 || !lookup.works.some((w) => w.hash === probeHash && doiKey(w.doi) === doiKey(probeDoi)))
    throw new Error(
      `POST /by-prefix did not find ${probeDoi}: HTTP ${lookupRes.status} ${JSON.stringify(lookup).slice(0, 300)}`,
    );

  // --- 2. the empty poll and the 304 under wrk, beside the ceilings, in turns ---
  const replyFile = join(work.path, 'empty-poll.json');
  writeFileSync(replyFile, pollText);
  const getCeiling = await startProcess(
    [process.execPath, join(REPO, 'bench/lib/get-ceiling-server.ts'), replyFile],
    listening,
  );
  const postCeiling = await startProcess([process.execPath, join(REPO, 'bench/ceiling-server.ts')], listening);
  const pollScript = getScript(join(work.path, 'poll.lua'), { 'x-api-key': KEY });
  const notModifiedScript = getScript(join(work.path, 'not-modified.lua'), {
    'x-api-key': KEY,
    'accept-encoding': 'gzip',
    'if-none-match': etag,
  });
  const postScript = wrkScript(join(work.path, 'post.lua'), [JSON.stringify({ dois: ['10.1234/x'] })], KEY);
  const targets = {
    poll: { url: pollUrl, script: pollScript },
    floor: { url: `${daemon.url}/v2.2/updates/changes?limit=0`, script: pollScript },
    getCeiling: { url: getCeiling.url, script: pollScript },
    postCeiling: { url: postCeiling.url, script: postScript },
    notModified: { url: prefixesUrl, script: notModifiedScript },
  };
  type Target = keyof typeof targets;
  console.log(`wrk: warm-up, then ${ROUNDS} runs per server in turns ...`);
  for (const { url, script } of Object.values(targets)) await wrk(url, script, WARMUP, CONNECTIONS);
  const runs = Object.fromEntries(Object.keys(targets).map((k) => [k, [] as Load[]])) as Record<Target, Load[]>;
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, { url, script }] of Object.entries(targets))
      runs[name as Target].push(await wrk(url, script, DURATION, CONNECTIONS));
  await getCeiling.stop();
  await postCeiling.stop();
  // --- 3, continued: after a change (after the load, which polls the feed as it was): works added by another
  // process (as a harvest's child commits); the first GET meanwhile gets the last list while the index is read
  // again on a worker, and the new list comes once that lands
  const added = await addWorks(storeDir);
  const afterChange = await getBeside();
  const tChange = performance.now();
  let changed: { etag: string | null; body: Uint8Array<ArrayBuffer> } = afterChange;
  while (changed.etag === etag) {
    if (performance.now() - tChange > 30_000)
      throw new Error('the prefix list did not change within 30 s of the import');
    await Bun.sleep(20);
    changed = await getPrefixes({ 'accept-encoding': 'gzip' });
  }
  const changedWorks = (JSON.parse(new TextDecoder().decode(Bun.gunzipSync(changed.body))) as { works: number }).works;
  if (changedWorks !== WORKS + added)
    throw new Error(`after the import the list counts ${fmt(changedWorks)} works, not ${fmt(WORKS + added)}`);
  const change = {
    firstMs: afterChange.ms,
    stale: afterChange.etag === etag,
    healthMs: afterChange.healthMs,
    newListMs: performance.now() - tChange + afterChange.ms,
  };

  await daemon.stop();
  const r = Object.fromEntries(
    Object.entries(runs).map(([k, loads]) => [
      k,
      { ...median(loads), errors: loads.reduce((n, l) => n + l.errors, 0) },
    ]),
  ) as Record<Target, Load>;

  // --- the report ---
  const worksPerRow = rows / WORKS;
  console.log(
    `\nChange feed and private lookup (issue 22): ${fmt(WORKS)} works with updates; the daemon in its own process, on 127.0.0.1 (client and server share the 2 cores)`,
  );
  console.log(
    `store build: in this process, Store.beginUpdatesImport('${ORIGIN}', 'snapshot') then commit(), into a fresh store; ${fmt(rows)} rows (${fmt(worksPerRow, 2)} per work) ` +
      `from the ${fmt(sample.length)} works of the Retraction Watch sample, copy n with ".n<n>" on the work's and the notice's DOI`,
  );
  console.log(
    `  import: rows into the scratch space ${fmt(build.addSeconds, 2)} s, commit (merge into updates + change feed rows with their SHA-256 key hashes + lineage) ${fmt(build.commitSeconds, 2)} s, total ${fmt(build.addSeconds + build.commitSeconds, 2)} s`,
  );
  console.log(
    `  feed head after it: commit ${build.head.commit}, seq ${fmt(build.head.seq)}; store file ${mib(build.fileBytes)}; daemon ready in ${fmt(startSeconds, 2)} s`,
  );
  const syncLine = (s: Sync) =>
    `${fmt(s.seconds, 2)} s, ${fmt(s.pages)} pages, ${mb(s.bytes)} (${fmt(s.bytes / s.items, 0)} bytes a work), ${fmt(s.items / s.seconds)} works/s; in requests ${fmt(s.requestSeconds, 2)} s, slowest page ${fmt(s.slowestPageMs, 1)} ms`;
  console.log(
    `\n1. full sync, limit=${PAGE}, from the start until more is false (${fmt(sync.distinct)} distinct DOIs, each once):`,
  );
  console.log(`  first run:  ${syncLine(syncs[0]!)}`);
  console.log(`  second run: ${syncLine(syncs[1]!)}`);
  console.log(
    `\n2. empty incremental poll (the last next, nothing new; reply ${pollText.length} bytes): wrk -t2 -c${CONNECTIONS} -d${DURATION}, ${ROUNDS} runs per server in turns, median shown`,
  );
  for (const [name, label] of [
    ['poll', 'daemon, empty poll'],
    ['floor', 'daemon, same route, limit=0 (400)'],
    ['getCeiling', 'ceiling, GET, same reply'],
    ['postCeiling', 'ceiling, POST 1 DOI (bench/ceiling-server.ts)'],
    ['notModified', 'daemon, prefixes If-None-Match (304)'],
  ] as const)
    console.log(`  ${label}, every run's req/s: ${runs[name].map((l) => fmt(l.rps)).join(', ')}`);
  console.log('');
  console.log('| server | req/s | p50 ms | p99 ms | errors (all runs) |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [name, label] of [
    ['poll', 'daemon: GET /changes?after=<last next> (empty)'],
    [
      'floor',
      "daemon's floor on the route: GET /changes?limit=0, a 400 after the key check, before any store read (its errors are these 400s)",
    ],
    ['getCeiling', 'tiny-reply ceiling: bare GET, the same reply'],
    ['postCeiling', 'tiny-reply ceiling of the other benches: POST 1 DOI, body parsed'],
    ['notModified', 'daemon: GET /prefixes, If-None-Match (304)'],
  ] as const)
    console.log(
      `| ${label} | ${fmt(r[name].rps)} | ${fmt(r[name].p50Ms, 2)} | ${fmt(r[name].p99Ms, 2)} | ${r[name].errors} |`,
    );
  console.log(
    `\n3. prefix list: prefixLength ${list.prefixLength}, ${fmt(list.prefixes.length)} prefixes (of ${fmt(16 ** list.prefixLength)} possible) for ${fmt(list.works)} works`,
  );
  console.log(
    `  bytes on the wire: gzip ${fmt(gzBytes)} (${mb(gzBytes)}), without gzip ${fmt(plainBody.length)} (${mb(plainBody.length)})`,
  );
  console.log(
    `  first GET (the index read on a worker as the daemon started): ${fmt(first.ms, 1)} ms; a /healthz sent 100 ms into it: HTTP ${first.healthStatus} after ${fmt(first.healthMs, 1)} ms\n` +
      `  after ${fmt(added)} works were added by another process: the first GET ${fmt(change.firstMs, 1)} ms (${change.stale ? 'the last list, while the index is read again on a worker' : 'the new list'}), a /healthz sent 100 ms into it ${fmt(change.healthMs, 1)} ms${change.healthMs > 500 ? ' (the read holds the daemon)' : ''}; the new list served ${fmt(change.newListMs, 0)} ms after that GET began`,
  );
  console.log(`  download, median of ${DOWNLOADS}: gzip ${fmt(mid(gz), 2)} ms, without gzip ${fmt(mid(plain), 2)} ms`);
  console.log(
    `  conditional GET (If-None-Match, 304), one at a time, median of ${conditional.length}: ${fmt(mid(conditional), 2)} ms; under wrk: ${fmt(r.notModified.rps)} req/s, p99 ${fmt(r.notModified.p99Ms, 2)} ms`,
  );
  console.log(
    `  POST /by-prefix with one ${list.prefixLength}-digit prefix: ${lookup.works.length} works returned, the probe DOI among them, ${fmt(lookupMs, 1)} ms`,
  );

  const ratio = r.poll.rps / r.getCeiling.rps;
  // the same ratio run by run (the servers of one round ran seconds apart): steadier when the machine drifts
  const roundRatios = runs.poll.map((l, i) => l.rps / runs.getCeiling[i]!.rps);
  console.log(
    `\nempty poll / GET ceiling, round by round: ${roundRatios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(mid(roundRatios), 2)}); daemon floor / GET ceiling: ${fmt(r.floor.rps / r.getCeiling.rps, 2)}`,
  );
  console.log('\n| figure | measured | target | result |');
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| import of ${fmt(WORKS)} works (scratch + commit) | ${fmt(build.addSeconds + build.commitSeconds, 2)} s (commit ${fmt(build.commitSeconds, 2)} s) | — | — |`,
  );
  console.log(
    `| full sync of ${fmt(WORKS)} works, limit=${PAGE} (first run) | ${fmt(sync.seconds, 2)} s, ${fmt(sync.pages)} pages, ${mb(sync.bytes)}, ${fmt(sync.items / sync.seconds)} works/s | <= 10 s | ${met(sync.seconds <= 10)} |`,
  );
  console.log(
    `| empty incremental poll | ${fmt(r.poll.rps)} req/s (errors ${r.poll.errors}); ratio ${fmt(ratio, 2)} to the GET ceiling (${fmt(r.getCeiling.rps)}; round by round, median ${fmt(mid(roundRatios), 2)}), ${fmt(r.poll.rps / r.postCeiling.rps, 2)} to the POST ceiling (${fmt(r.postCeiling.rps)}) | >= 0.70 of the tiny-reply ceiling | ${met(ratio >= 0.7 && r.poll.errors === 0)} |`,
  );
  console.log(
    `| prefix list with gzip | ${mb(gzBytes)} (without gzip ${mb(plainBody.length)}); download ${fmt(mid(gz), 2)} ms | <= 1.5 MB | ${met(gzBytes <= 1.5e6)} |`,
  );
  console.log(
    `| prefix list, first GET after the daemon started | ${fmt(first.ms, 1)} ms; /healthz meanwhile ${fmt(first.healthMs, 1)} ms | — | — |`,
  );
  console.log(
    `| prefix list, first GET after a change | ${fmt(change.firstMs, 1)} ms${change.stale ? ' (the last list)' : ''}; /healthz meanwhile ${fmt(change.healthMs, 1)} ms; the new list after ${fmt(change.newListMs, 0)} ms | — | — |`,
  );
  console.log(
    `| prefix list, If-None-Match | 304 in ${fmt(mid(conditional), 2)} ms; ${fmt(r.notModified.rps)} req/s under wrk (errors ${r.notModified.errors}) | — | — |`,
  );
} finally {
  await stopAll();
  work.remove();
}
