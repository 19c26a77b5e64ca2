import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { extractDebianPackage, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import { startDaemon, tempDir, waitFor, waitForLog, writeConfig, writeDeposit } from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';
import { csv, row } from '../support/rw-sample.ts';

/**
 * What Prometheus makes of a running daemon (docs/operations.md, "Monitoring"): its /metrics passes `promtool check
 * metrics`. The daemon has applied files (one line rejected), quarantined one, imported update information from a
 * URL, asked a platform's Entitlement API and answered requests, so every family it exports has samples.
 * promtool comes from Debian's `prometheus` package, unpacked (never installed: it would start a service).
 */

const SECRET = 'gamma-shared-secret-0123456789abcdef';
const dir = tempDir('doi-holdings-monitoring-');
let prometheusRoot: string;
let platform: PlatformServer;
let updates: ReturnType<typeof Bun.serve>;
let daemon: ReturnType<typeof startDaemon>;
/** the daemon's base URL, e.g. http://127.0.0.1:40123 */
let base: string;

beforeAll(async () => {
  prometheusRoot = extractDebianPackage('prometheus');
  platform = new PlatformServer(SECRET);
  const rw = csv([row(70000), row(70264)]);
  updates = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(rw, { headers: { 'content-type': 'text/csv' } }) });
  const cfg = writeConfig(
    dir.path,
    `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\n` +
      `\n[[updates.urls]]\nurl = "http://127.0.0.1:${updates.port}/rw.csv"\nformat = "retraction-watch-csv"\neveryMinutes = 60\n`,
  );
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/open.1', accessType: 'open', vor: [{ url: 'https://acme.example/open.pdf' }] }, { doi: 'not a DOI', accessType: 'open' }]);
  writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.6666/paid.1', accessType: 'paid' }]);
  writeDeposit(cfg.bucket, 'beta', [], { bytes: new TextEncoder().encode('not gzip: quarantined') });
  daemon = startDaemon(cfg.path, { GAMMA_SECRET: SECRET });
  await waitForLog(daemon, 'daemon.started');
  base = /"event":"daemon.started".*"url":"([^"]+)"/.exec(daemon.log())![1]!.replace(/\/$/, '');
  await waitForLog(daemon, 'entitlement.index_built');
  await waitForLog(daemon, 'file.quarantined');
  await waitForLog(daemon, 'updates.imported');
  await waitFor(() => daemon.log().split('"event":"file.applied"').length - 1 === 2, 'both good files applied');
  const entitlements = await fetch(`${base}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: ['10.6666/paid.1', '10.5555/open.1'] }),
  });
  expect(((await entitlements.json()) as { entitlements: { source?: string }[] }).entitlements.map((e) => e.source)).toEqual(['service_request', 'oa_platform']);
  expect(platform.calls).toHaveLength(1);
  expect((await fetch(`${base}/doi/10.5555/open.1?format=json`)).status).toBe(200);
  expect((await fetch(`${base}/no/such/route`)).status).toBe(404);
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await daemon?.stop();
  await platform?.stop();
  await updates?.stop(true);
  dir.remove();
});

/** Each sample of a /metrics text: `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  return new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
}

describe('/metrics', () => {
  test('promtool check metrics finds nothing to complain of', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    // what the setup did shows, so the check reads a scrape with every kind of family filled in
    const m = samples(text);
    expect(m.get('doi_holdings_files_applied_total{env="production"}')).toBe(2);
    expect(m.get('doi_holdings_files_quarantined_total{env="production"}')).toBe(1);
    expect(m.get('doi_holdings_records_total{env="production",outcome="rejected"}')).toBe(1);
    expect(m.get('doi_holdings_platform_calls_total{platform="gamma",outcome="ok"}')).toBe(1);
    expect(m.get('doi_holdings_http_requests_total{route="other",status="404"}')).toBe(1);
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    const check = Bun.spawnSync([join(prometheusRoot, 'usr/bin/promtool'), 'check', 'metrics'], { stdin: Buffer.from(text) });
    expect({ code: check.exitCode, out: check.stdout.toString() + check.stderr.toString() }).toEqual({ code: 0, out: '' });
  });
});
