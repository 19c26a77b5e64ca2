import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { jsonLogger } from '../../src/base/log.ts';
import { loadConfig } from '../../src/config/index.ts';
import { Daemon } from '../../src/daemon/daemon.ts';
import { IngestStats } from '../../src/ingest/index.ts';
import { Store } from '../../src/store/index.ts';
import { KEY, makeApp } from '../http/http-support.ts';
import { tempDir, waitFor, writeConfig, writeDeposit } from '../support/fixtures.ts';
import { SAMPLE_PATH } from '../support/rw-sample.ts';

/** What an operator monitors (docs/operations.md): /metrics of the running daemon, /healthz naming what failed, 5xx log lines. */

let dir: ReturnType<typeof tempDir>;
let daemon: Daemon | undefined;
let feeds: ReturnType<typeof Bun.serve>;
const logged: Record<string, unknown>[] = [];

beforeEach(() => {
  dir = tempDir('doi-holdings-monitoring-');
  logged.length = 0;
  feeds = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (r) =>
      new URL(r.url).pathname === '/rw.csv'
        ? new Response(readFileSync(SAMPLE_PATH))
        : new Response('down', { status: 500 }),
  });
});
afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  feeds.stop(true);
  dir.remove();
});

async function metrics(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

test('/metrics of the running daemon: process figures, ingest lag, update sources, HTTP latency; /healthz names a stuck ingestor, which /readyz does not fail', async () => {
  const good = `http://127.0.0.1:${feeds.port}/rw.csv`;
  const bad = `http://127.0.0.1:${feeds.port}/broken.csv`;
  const cfg = writeConfig(
    dir.path,
    `\n[updates]\nurls = [\n  { url = "${good}", format = "retraction-watch-csv", everyMinutes = 60 },\n  { url = "${bad}", format = "retraction-watch-csv" },\n]\n`,
  );
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/m1', accessType: 'open' }]);
  daemon = new Daemon(
    loadConfig(cfg.path, {}),
    jsonLogger((l) => logged.push(JSON.parse(l))),
    'test',
  );
  const before = Date.now() / 1000;
  await daemon.start();
  const url = daemon.url!;
  await waitFor(() => logged.some((l) => l.event === 'file.applied'), 'the deposit applied');
  await daemon.updateSources!.idle();
  expect(
    (
      await fetch(`${url}/v2.2/updates`, {
        method: 'POST',
        headers: { 'x-api-key': 'test-key-123', 'content-type': 'application/json' },
        body: '{"dois":["10.1234/x"]}',
      })
    ).status,
  ).toBe(200);

  const m = await metrics(url);
  expect(m.get('process_resident_memory_bytes')!).toBeGreaterThan(10e6);
  expect(m.get('process_open_fds')!).toBeGreaterThan(3);
  expect(m.get('nodejs_heap_size_used_bytes')!).toBeGreaterThan(1e6);
  expect(m.has('nodejs_eventloop_lag_seconds')).toBe(true);
  expect(m.get('doi_holdings_ingest_lag_seconds{env="production"}')).toBe(0);
  expect(m.get('doi_holdings_ingest_lag_seconds{env="staging"}')).toBe(0);
  expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds{source="${good}"}`)!).toBeGreaterThanOrEqual(
    Math.floor(before),
  );
  expect(m.get(`doi_holdings_update_source_interval_seconds{source="${good}"}`)).toBe(3600);
  expect(m.get(`doi_holdings_update_source_interval_seconds{source="${bad}"}`)).toBe(86400);
  expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds{source="${bad}"}`)).toBe(0);
  expect(m.get(`doi_holdings_update_source_last_failure_timestamp_seconds{source="${bad}"}`)!).toBeGreaterThanOrEqual(
    Math.floor(before),
  );
  expect(m.get('doi_holdings_http_request_duration_seconds_count{route="/v2.2/updates",status="200"}')).toBe(1);
  expect(m.get('doi_holdings_http_requests_total{route="/v2.2/updates",status="200"}')).toBe(1);
  // no S3 bucket here: no S3 series
  expect([...m.keys()].some((k) => k.startsWith('doi_holdings_s3_'))).toBe(false);

  const healthy = await fetch(`${url}/healthz`);
  expect(healthy.status).toBe(200);
  expect(await healthy.json()).toMatchObject({
    status: 'ok',
    production: { queueDepth: 0, stuck: false, lagSeconds: 0 },
  });

  // an ingestor with files waiting and nothing finished for 11 minutes
  const stats = daemon.envs.get('production')!.ingestor.stats;
  stats.queueDepth = 2;
  stats.lastProgressAt = Date.now() - 11 * 60_000;
  const sick = await fetch(`${url}/healthz`);
  expect(sick.status).toBe(503);
  expect(await sick.json()).toMatchObject({
    status: 'unhealthy',
    failed: ['production: ingestion stuck: 2 files waiting, none finished for 660 s'],
    production: { stuck: true },
  });
  // still ready: the answers are right for what the store holds, so a load balancer keeps sending requests here
  const ready = await fetch(`${url}/readyz`);
  expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
  // counted, but not an http.server_error line: the 503 is /healthz's answer (its cause has alerts of its own)
  expect((await metrics(url)).get('doi_holdings_http_requests_total{route="/healthz",status="503"}')).toBe(1);
  expect(logged.filter((l) => l.event === 'http.server_error')).toEqual([]);
  stats.queueDepth = 0;
});

test('ingest lag: the newest file finished behind the newest seen, 0 once nothing waits', () => {
  const s = new IngestStats();
  s.noteSeen(1_000_000);
  s.noteSeen(1_090_000);
  s.noteDone(1_000_000);
  s.queueDepth = 1;
  expect(s.lagSeconds()).toBe(90);
  s.noteDone(1_090_000);
  expect(s.lagSeconds()).toBe(0);
  s.noteSeen(1_100_000);
  s.queueDepth = 0; // e.g. the file went away before it was read
  expect(s.lagSeconds()).toBe(0);
});

test('ingest lag before the first file is finished: the backlog span, not the newest file age since 1970', () => {
  const s = new IngestStats();
  s.noteSeen(1_700_000_600_000);
  s.noteSeen(1_700_000_000_000);
  s.queueDepth = 2;
  expect(s.lagSeconds()).toBe(600);
});

test('a 5xx gets one error log line naming the route (its series), path and error', async () => {
  const lines: Record<string, unknown>[] = [];
  const store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
  // a real store whose update index fails when the route reaches for it
  const broken = Object.create(store, {
    updatesIndex: {
      get: () => {
        throw new Error('store closed under us');
      },
    },
  }) as Store;
  const app = makeApp({ production: { store: broken } }, { log: jsonLogger((l) => lines.push(JSON.parse(l))) });
  const r = await app.handle(
    new Request('http://localhost/v2.2/updates', {
      method: 'POST',
      // a key makeApp knows: the store is reached for only once the key and the body are read
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{"dois":["10.1234/x"]}',
    }),
  );
  expect(r.status).toBe(500);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    level: 'error',
    event: 'http.server_error',
    method: 'POST',
    route: '/v2.2/updates',
    path: '/v2.2/updates',
    status: 500,
  });
  expect(String(lines[0]!.error)).toContain('store closed under us');
  // a 4xx is no log line
  expect((await app.handle(new Request('http://localhost/v2.1/nowhere'))).status).toBe(404);
  expect(lines).toHaveLength(1);
  // a handler whose promise rejects (/metrics reads the same broken store) is named by its route too
  expect((await app.handle(new Request('http://localhost/metrics'))).status).toBe(500);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatchObject({
    level: 'error',
    event: 'http.server_error',
    route: '/metrics',
    path: '/metrics',
    status: 500,
  });
  await store.close();
});

test("/healthz: its 503 is its answer (no error line), but its handler's failure is a 500 with one", async () => {
  const lines: Record<string, unknown>[] = [];
  const store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
  let health: () => { ok: boolean; checks: Record<string, unknown> } = () => ({ ok: false, checks: {} });
  const app = makeApp(
    { production: { store } },
    { log: jsonLogger((l) => lines.push(JSON.parse(l))), health: () => health() },
  );
  expect((await app.handle(new Request('http://localhost/healthz'))).status).toBe(503);
  expect(lines).toEqual([]);
  health = () => {
    throw new Error('health check broke');
  };
  expect((await app.handle(new Request('http://localhost/healthz'))).status).toBe(500);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'error', event: 'http.server_error', route: '/healthz', status: 500 });
  expect(String(lines[0]!.error)).toContain('health check broke');
  await store.close();
});
