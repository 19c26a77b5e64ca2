/**
 * Updates API benchmark (issue 12): the real daemon (its own process) with 1.1M holdings ingested from the
 * generated deposits and the 3,000-record Retraction Watch sample imported; load from wrk (Debian's package,
 * installed here if missing) on 127.0.0.1, 2 threads, 50 connections, 5 s per run after a 2 s warm-up, three runs
 * per server taken in turns. Bodies of 1 and 100 DOIs, ~5% of them DOIs with updates, the rest holdings without.
 * In the same run, the ceiling: a bare Bun server that parses the body and returns a fixed reply, twice: a tiny
 * reply, and a reply of the size the daemon sends for such a body (a 100-DOI answer is ~11 KB, which costs the
 * server and wrk on the same 2 cores more than a tiny one). Prints req/s, p50, p99 and both ratios (medians).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/support/fixtures.ts';
import { SAMPLE_PATH as SAMPLE } from '../test/support/rw-sample.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import { ingestData, REPO } from './lib/ingest-data.ts';
import { fmt } from './lib/measure.ts';
import { startProcess } from './lib/processes.ts';
import { ensureWrk, sh } from './lib/shell.ts';
import { bodies, doiPools, type Load, wrk, wrkScript } from './lib/updates-load.ts';

const KEY = 'bench-key-0123456789';
const DURATION = '5s';
const WARMUP = '2s';
const ROUNDS = 3;
const CONNECTIONS = 50;

await ensureWrk();
const { dir: data, manifest } = await ingestData();
const work = tempDir('doi-holdings-bench-api-');
try {
  const config = join(work.path, 'api.toml');
  writeDaemonConfig(config, {
    mapSizeGiB: 16,
    bucket: join(data, 'bucket'),
    platforms: PLATFORM_NAMES.map((name) => ({ name })),
    apiKey: KEY,
    updates: true,
  });
  const imported = await sh([
    process.execPath,
    join(REPO, 'src/main.ts'),
    '--import-updates',
    SAMPLE,
    '--config',
    config,
  ]);
  if (imported.code > 1) throw new Error(`import failed: ${imported.out}`);
  console.log('starting the daemon and ingesting 120 deposit files (1.1M holdings) ...');
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
  );
  const files = manifest.a.length + manifest.b.length;
  for (;;) {
    const h = (await (await fetch(`${daemon.url}/healthz`)).json()) as {
      production: { filesApplied: number; queueDepth: number };
    };
    if (h.production.filesApplied >= files && h.production.queueDepth === 0) break;
    await Bun.sleep(250);
  }
  const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
  const live = [...metrics.matchAll(/^doi_holdings_live\{[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
  const withUpdates = /^doi_holdings_works_with_updates\{[^}]*\} (\d+)$/m.exec(metrics)?.[1];

  const pools = await doiPools(join(data, 'bucket'), manifest.a.slice(0, 30));
  const scripts = {
    one: wrkScript(join(work.path, 'one.lua'), bodies(1, 2000, pools), KEY),
    hundred: wrkScript(join(work.path, 'hundred.lua'), bodies(100, 300, pools), KEY),
  };
  // a sanity check that the bodies reach real answers: some updates come back
  const probe = (await (
    await fetch(`${daemon.url}/v2.2/updates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: bodies(100, 1, pools)[0],
    })
  ).json()) as {
    documents: { statusCode: number; updates: unknown[] }[];
  };
  const answered = probe.documents.filter((d) => d.statusCode === 200).length;
  const hits = probe.documents.filter((d) => d.updates.length > 0).length;

  // typical answers of the daemon, for the same-size ceiling
  const post = async (body: string) =>
    new Uint8Array(
      await (
        await fetch(`${daemon.url}/v2.2/updates`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': KEY },
          body,
        })
      ).arrayBuffer(),
    );
  const replyOne = join(work.path, 'reply-1.json');
  const replyMany = join(work.path, 'reply-100.json');
  writeFileSync(replyOne, await post(bodies(1, 1, pools)[0]!));
  writeFileSync(replyMany, await post(bodies(100, 1, pools)[0]!));

  const ceilingTiny = await startProcess(
    [process.execPath, join(REPO, 'bench/ceiling-server.ts')],
    (out) => /^(http:\S+)$/m.exec(out)?.[1],
  );
  const ceilingSame = await startProcess(
    [process.execPath, join(REPO, 'bench/ceiling-server.ts'), replyOne, replyMany],
    (out) => /^(http:\S+)$/m.exec(out)?.[1],
  );
  const targets = { api: `${daemon.url}/v2.2/updates`, tiny: ceilingTiny.url, same: ceilingSame.url };
  // Every server is warmed first (a running daemon has its hot paths compiled), then the servers take turns,
  // ROUNDS runs each: this machine's speed drifts by 10-20% over tens of seconds, and turns spread the drift
  // over all three alike. Each figure is the median run (by req/s) of its server.
  for (const script of Object.values(scripts))
    for (const url of Object.values(targets)) await wrk(url, script, WARMUP, CONNECTIONS);
  const runs: Record<string, Record<keyof typeof targets, Load[]>> = {};
  for (const [name, script] of Object.entries(scripts)) {
    runs[name] = { api: [], tiny: [], same: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const [server, url] of Object.entries(targets))
        runs[name]![server as keyof typeof targets].push(await wrk(url, script, DURATION, CONNECTIONS));
  }
  const median = (loads: Load[]) => [...loads].sort((a, b) => a.rps - b.rps)[loads.length >> 1]!;
  const results = Object.fromEntries(
    Object.entries(runs).map(([name, r]) => [
      name,
      {
        api: { ...median(r.api), errors: r.api.reduce((n, l) => n + l.errors, 0) },
        tiny: median(r.tiny),
        same: median(r.same),
      },
    ]),
  );
  await ceilingTiny.stop();
  await ceilingSame.stop();
  await daemon.stop();

  console.log(
    `\nUpdates API: ${fmt(live)} live holdings, ${withUpdates} works with updates; wrk -t2 -c${CONNECTIONS} -d${DURATION} on 127.0.0.1 (client and server share the 2 cores), ${ROUNDS} runs per server taken in turns, median shown`,
  );
  console.log(`probe: a 100-DOI body got ${answered} statusCode 200 documents, ${hits} with updates\n`);
  console.log(
    `reply sizes: 1 DOI ${fmt(Bun.file(replyOne).size)} bytes, 100 DOIs ${fmt(Bun.file(replyMany).size)} bytes (the same-size ceiling returns these)\n`,
  );
  for (const [name, r] of Object.entries(runs))
    console.log(
      `${name === 'one' ? '1 DOI' : '100 DOIs'}, every run's req/s: daemon ${r.api.map((l) => fmt(l.rps)).join(', ')}; tiny ${r.tiny.map((l) => fmt(l.rps)).join(', ')}; same-size ${r.same.map((l) => fmt(l.rps)).join(', ')}`,
    );
  console.log('');
  console.log(
    '| body | daemon req/s | p50 ms | p99 ms | errors (all runs) | ceiling, tiny reply: req/s (p50, p99) | ratio | ceiling, same-size reply: req/s (p50, p99) | ratio | target |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  const target = { one: '>= 0.70 of the ceiling, p99 <= 20 ms', hundred: '>= 10,000 req/s, >= 0.45 of the ceiling' };
  const c = (l: Load) => `${fmt(l.rps)} (${fmt(l.p50Ms, 2)}, ${fmt(l.p99Ms, 2)})`;
  for (const [name, { api, tiny, same }] of Object.entries(results))
    console.log(
      `| ${name === 'one' ? '1 DOI' : '100 DOIs'} | ${fmt(api.rps)} | ${fmt(api.p50Ms, 2)} | ${fmt(api.p99Ms, 2)} | ${api.errors} | ${c(tiny)} | ${fmt(api.rps / tiny.rps, 2)} | ${c(same)} | ${fmt(api.rps / same.rps, 2)} | ${target[name as 'one' | 'hundred']} |`,
    );
} finally {
  work.remove();
}
