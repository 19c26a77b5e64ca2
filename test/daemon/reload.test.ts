import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startDaemon,
  type TestConfig,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';

/**
 * SIGHUP (`systemctl reload`) on the real daemon process: keys rotate with an overlap, platforms and their
 * Entitlement API settings change live, an invalid config is refused with every fault logged and the running one
 * kept, and a setting that needs a restart is named.
 */

const SECRET = 'gamma-shared-secret-0123456789abcdef';
let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let platform: PlatformServer;
let daemon: ReturnType<typeof startDaemon> | undefined;

beforeEach(() => {
  dir = tempDir('doi-holdings-reload-');
  platform = new PlatformServer(SECRET);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await platform.stop();
  dir.remove();
});

/** The test config with a secrets file and the `rotating` integrator whose key lives in it. */
function writeFiles(secrets: string, integrator: string, opts: { top?: string; extra?: string } = {}): void {
  cfg = writeConfig(
    dir.path,
    `\n[[integrators]]\nname = "rotating"\napiKeyEnv = "ROT_KEY"\n${integrator}\n${opts.extra ?? ''}`,
  );
  let text = readFileSync(cfg.path, 'utf8');
  // a [server] table given here replaces writeConfig's (a table may appear once)
  if (opts.top?.includes('[server]')) text = text.replace('[server]\nlisten = "127.0.0.1:0"\n', '');
  writeFileSync(cfg.path, `secretsFile = "secrets.env"\n${opts.top ?? ''}\n${text}`);
  writeFileSync(join(dir.path, 'secrets.env'), secrets);
}

/** The Updates API asked about one DOI with `key`. */
function askUpdates(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v2.2/updates`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: '{"dois":["10.1234/x"]}',
  });
}

const count = (needle: string) =>
  daemon!
    .log()
    .split('\n')
    .filter((l) => l.includes(needle)).length;

async function reload(expectEvent: 'config.reloaded' | 'config.reload_refused'): Promise<Record<string, unknown>> {
  const before = count(`"event":"${expectEvent}"`);
  daemon!.signal('SIGHUP');
  await waitFor(() => count(`"event":"${expectEvent}"`) > before, expectEvent);
  const lines = daemon!
    .log()
    .split('\n')
    .filter((l) => l.includes(`"event":"${expectEvent}"`));
  return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
}

test('keys rotate with an overlap, a bad config is refused and kept out, platforms change live, listen needs a restart', async () => {
  writeFiles('# integrator keys\nROT_KEY=first-key-0001\n', '');
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  const status = async (key: string) => (await askUpdates(url, key)).status;
  expect(await status('first-key-0001')).toBe(200);
  expect(await status('second-key-0002')).toBe(401);

  // rotation starts: the new key is the key, the old one is still accepted
  writeFiles('ROT_KEY=second-key-0002\nOLD_KEY="first-key-0001"\n', 'previousApiKeyEnv = "OLD_KEY"');
  const first = await reload('config.reloaded');
  expect(first.integrators).toEqual({ added: [], removed: [], changed: ['rotating'] });
  expect(JSON.stringify(first)).not.toContain('key-000'); // names only, never keys
  expect(await status('first-key-0001')).toBe(200);
  expect(await status('second-key-0002')).toBe(200);
  expect(await status('test-key-123')).toBe(200);

  // rotation ends: the old key is refused
  writeFiles('ROT_KEY=second-key-0002\n', 'previousApiKeyEnv = "OLD_KEY"');
  await reload('config.reloaded');
  expect(await status('first-key-0001')).toBe(401);
  expect(await status('second-key-0002')).toBe(200);

  // an invalid config (three faults in two files) is refused whole: every fault is logged, the running keys stay
  writeFiles('ROT_KEY=third-key-0003\nthis line is not a secret\n', 'updates = "yes"', {
    top: '[server]\nlisten = "nowhere"',
  });
  const refused = await reload('config.reload_refused');
  const problems = (refused.problems as string[]).join('\n');
  expect(problems).toContain('line 2');
  expect(problems).toContain('/integrators/1/updates');
  expect(problems).toContain('/server/listen');
  expect(problems).not.toContain('third-key');
  expect(await status('second-key-0002')).toBe(200);
  expect(await status('third-key-0003')).toBe(401);

  // a new platform with an Entitlement API, and a listen address that needs a restart
  writeFiles(`ROT_KEY=second-key-0002\nGAMMA_SECRET=${SECRET}\n`, '', {
    top: '[server]\nlisten = "127.0.0.1:1"',
    extra: `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\n`,
  });
  const taken = await reload('config.reloaded');
  expect(taken.platforms).toEqual({ added: ['gamma'], removed: [], changed: [] });
  const restart = daemon
    .log()
    .split('\n')
    .find((l) => l.includes('"event":"config.restart_needed"'))!;
  expect(JSON.parse(restart).fields).toEqual(['server.listen']);
  expect(await status('second-key-0002')).toBe(200); // still listening where it was

  writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.6666/Paid.1', accessType: 'paid' }]);
  await waitForLog(daemon, '"event":"file.applied","env":"production","key":"gamma/'); // accepted: gamma is a platform now
  const answer = async () => {
    const r = await fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'second-key-0002' },
      body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: ['10.6666/paid.1'] }),
    });
    return ((await r.json()) as { entitlements: { source?: string; entitled?: string }[] }).entitlements[0]!;
  };
  const got = await waitFor(async () => {
    const a = await answer();
    return a.source === 'service_request' && a;
  }, 'the new platform to be asked');
  expect(got.entitled).toBe('yes');
  expect(platform.calls.length).toBeGreaterThan(0);
  expect(platform.calls[0]!.claims?.iss).toBe('doi-holdings');
});

test('a reload keeps the answer cache unless a platform or [entitlements] changed', async () => {
  const gamma = (timeoutMs: number) =>
    `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\nentitlementCacheSeconds = 300\nentitlementTimeoutMs = ${timeoutMs}\n`;
  const secrets = `ROT_KEY=first-key-0001\nGAMMA_SECRET=${SECRET}\n`;
  writeFiles(secrets, '', { extra: gamma(1000) });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.6666/Cached.1', accessType: 'paid' }]);
  await waitForLog(daemon, '"event":"file.applied","env":"production","key":"gamma/');
  const source = async () => {
    const r = await fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'first-key-0001' },
      body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: ['10.6666/cached.1'] }),
    });
    return ((await r.json()) as { entitlements: { source?: string }[] }).entitlements[0]!.source;
  };
  expect(await source()).toBe('service_request');
  expect(await source()).toBe('service_cache');
  expect(platform.calls).toHaveLength(1);

  // a new integrator: the platforms are as they were, and so are their cached answers
  writeFiles(secrets, '', {
    extra: `${gamma(1000)}\n[[integrators]]\nname = "newcomer"\napiKey = "newcomer-key-0001"\n`,
  });
  const added = await reload('config.reloaded');
  expect(added.integrators).toEqual({ added: ['newcomer'], removed: [], changed: [] });
  expect(await source()).toBe('service_cache');
  expect(platform.calls).toHaveLength(1);

  // the platform's settings change: its answers are asked again
  writeFiles(secrets, '', {
    extra: `${gamma(2000)}\n[[integrators]]\nname = "newcomer"\napiKey = "newcomer-key-0001"\n`,
  });
  const changed = await reload('config.reloaded');
  expect(changed.platforms).toEqual({ added: [], removed: [], changed: ['gamma'] });
  expect(await source()).toBe('service_request');
  expect(platform.calls).toHaveLength(2);
});

test("an integrator's counter setting changes live: from the reload on, its asks reach the platform each time, open DOIs too, and back", async () => {
  const gamma = `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\nentitlementCacheSeconds = 300\nentitlementTimeoutMs = 30000\n`;
  const secrets = `ROT_KEY=first-key-0001\nGAMMA_SECRET=${SECRET}\n`;
  platform.mode = { kind: 'answer', entitled: () => 'yes', extra: () => ({ org: { customerID: 'cust-9' } }) };
  writeFiles(secrets, '', { extra: gamma });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  writeDeposit(cfg.bucket, 'gamma', [
    { doi: '10.6666/Paid.1', accessType: 'paid' },
    { doi: '10.6666/Open.1', accessType: 'open' },
  ]);
  await waitForLog(daemon, '"event":"file.applied","env":"production","key":"gamma/');
  const answer = async (doi: string) => {
    const r = await fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'first-key-0001' },
      body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: [doi] }),
    });
    const { source, org } = ((await r.json()) as { entitlements: { source?: string; org?: object }[] })
      .entitlements[0]!;
    return { source, org };
  };
  const asIs = { source: 'service_request', org: { ipv4: '192.0.2.1' } };
  const counted = { source: 'service_request', org: { ipv4: '192.0.2.1', customerID: 'cust-9' } };
  expect(await answer('10.6666/paid.1')).toEqual(asIs);
  expect((await answer('10.6666/paid.1')).source).toBe('service_cache');
  expect((await answer('10.6666/open.1')).source).toBe('oa_platform');
  expect(platform.calls).toHaveLength(1);

  writeFiles(secrets, 'counter = true', { extra: gamma });
  expect((await reload('config.reloaded')).integrators).toEqual({ added: [], removed: [], changed: ['rotating'] });
  expect(await answer('10.6666/paid.1')).toEqual(counted);
  expect(await answer('10.6666/paid.1')).toEqual(counted);
  expect(await answer('10.6666/open.1')).toEqual(counted);
  expect(platform.calls).toHaveLength(4);

  // and back: the answer the cache still holds is served again, the open DOI from its deposit
  writeFiles(secrets, '', { extra: gamma });
  await reload('config.reloaded');
  expect((await answer('10.6666/paid.1')).source).toBe('service_cache');
  expect((await answer('10.6666/open.1')).source).toBe('oa_platform');
  expect(platform.calls).toHaveLength(4);
});

test("a reload that replaces a platform's client keeps its counters; only removing the platform drops its series", async () => {
  const gamma = (timeoutMs: number) =>
    `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\nentitlementCacheSeconds = 300\nentitlementTimeoutMs = ${timeoutMs}\n`;
  const secrets = `ROT_KEY=first-key-0001\nGAMMA_SECRET=${SECRET}\n`;
  // one failed call opens the breaker, so that every gamma counter has counted by the reload
  writeFiles(secrets, '', { top: '[entitlements]\nbreakerFailures = 1', extra: gamma(1000) });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  writeDeposit(cfg.bucket, 'gamma', [
    { doi: '10.6666/Counted.1', accessType: 'paid' },
    { doi: '10.6666/Counted.2', accessType: 'paid' },
  ]);
  await waitForLog(daemon, '"event":"file.applied","env":"production","key":"gamma/');
  const ask = (doi: string) =>
    fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'first-key-0001' },
      body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: [doi] }),
    });
  await ask('10.6666/counted.1'); // ok
  await ask('10.6666/counted.1'); // from the cache
  platform.mode = { kind: 'raw', status: 500, body: '{}' };
  await ask('10.6666/counted.2'); // error: the breaker opens
  const gammaSeries = async () =>
    (await (await fetch(`${url}/metrics`)).text())
      .split('\n')
      .filter((l) =>
        /^doi_holdings_platform_(calls_total|breaker_opens_total|cache_hits_total|call_seconds_count)\{.*platform="gamma"/.test(
          l,
        ),
      )
      .filter((l) => !/outcome="(timeout|malformed|breaker_open|no_slot|rate_limited)"/.test(l));
  const counted = [
    'doi_holdings_platform_calls_total{platform="gamma",outcome="ok"} 1',
    'doi_holdings_platform_calls_total{platform="gamma",outcome="error"} 1',
    'doi_holdings_platform_breaker_opens_total{platform="gamma"} 1',
    'doi_holdings_platform_cache_hits_total{platform="gamma"} 1',
    'doi_holdings_platform_call_seconds_count{platform="gamma"} 2',
  ];
  expect(await gammaSeries()).toEqual(counted);

  // gamma's time-out changes: a new client (breaker closed, cache dropped), the same totals
  writeFiles(secrets, '', { top: '[entitlements]\nbreakerFailures = 1', extra: gamma(2000) });
  expect((await reload('config.reloaded')).platforms).toEqual({ added: [], removed: [], changed: ['gamma'] });
  expect(await gammaSeries()).toEqual(counted);
  // [entitlements] changes: every client is made again, and still the totals go on
  writeFiles(secrets, '', { top: '[entitlements]\nbreakerFailures = 2', extra: gamma(2000) });
  await reload('config.reloaded');
  expect(await gammaSeries()).toEqual(counted);
  platform.mode = { kind: 'answer', entitled: () => 'yes' };
  await ask('10.6666/counted.2');
  expect(await gammaSeries()).toEqual(
    counted.map((l) =>
      l
        .replace('outcome="ok"} 1', 'outcome="ok"} 2')
        .replace('_count{platform="gamma"} 2', '_count{platform="gamma"} 3'),
    ),
  );

  // gamma removed from the config: its series go
  writeFiles(secrets, '', { top: '[entitlements]\nbreakerFailures = 2' });
  await reload('config.reloaded');
  expect(await gammaSeries()).toEqual([]);
});

test('a secret removed from the secrets file is gone after a reload, though systemd put the file in the environment at start', async () => {
  writeFiles('ROT_KEY=second-key-0002\nOLD_KEY=first-key-0001\n', 'previousApiKeyEnv = "OLD_KEY"');
  // as EnvironmentFile= in the unit does: the same lines in the process environment
  daemon = startDaemon(cfg.path, { ROT_KEY: 'second-key-0002', OLD_KEY: 'first-key-0001' });
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  const status = async (key: string) => (await askUpdates(url, key)).status;
  expect(await status('first-key-0001')).toBe(200);
  writeFiles('ROT_KEY=second-key-0002\n', 'previousApiKeyEnv = "OLD_KEY"'); // the old key's line removed, not emptied
  await reload('config.reloaded');
  expect(await status('first-key-0001')).toBe(401);
  expect(await status('second-key-0002')).toBe(200);
});

test('a reload whose update sources cannot start takes nothing, and the running sources go on', async () => {
  const dropDir = join(dir.path, 'drop');
  writeFiles('ROT_KEY=first-key-0001\n', '', { top: `[updates]\ndropDir = ${JSON.stringify(dropDir)}` });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  const status = async (key: string) => (await askUpdates(url, key)).status;
  // a drop folder that cannot be made (under a file), and a key change in the same reload
  writeFiles('ROT_KEY=second-key-0002\n', '', {
    top: `[updates]\ndropDir = ${JSON.stringify(join(cfg.path, 'drop'))}`,
  });
  const before = count('"event":"config.reload_failed"');
  daemon.signal('SIGHUP');
  await waitFor(() => count('"event":"config.reload_failed"') > before, 'config.reload_failed');
  expect(await status('first-key-0001')).toBe(200);
  expect(await status('second-key-0002')).toBe(401);
  // the running drop folder is still watched
  const csv =
    'Record ID,OriginalPaperDOI,RetractionDOI,RetractionDate,RetractionNature,Reason,URLS\n1,10.1234/x,10.1234/n,2/2/2015 0:00,Retraction,,\n';
  writeFileSync(join(dropDir, 'rw.csv'), csv);
  await waitFor(
    async () => {
      const r = await askUpdates(url, 'first-key-0001');
      return ((await r.json()) as { documents: { updates: unknown[] }[] }).documents[0]!.updates.length === 1;
    },
    'the dropped file imported',
    30_000,
  );
});

test('a reload does not make a stale update source fresh again: staleness counts from the daemon start, not the reload', async () => {
  const unreachable = 'http://127.0.0.1:9/rw.csv'; // the discard port: refused
  const source = (extra: string) =>
    `[updates]\n\n[[updates.urls]]\nurl = "${unreachable}"\nformat = "retraction-watch-csv"\neveryMinutes = 60\nstaleAfterHours = 0.0005${extra}`;
  writeFiles('ROT_KEY=first-key-0001\n', '', { extra: source('') });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  const state = async () =>
    ((await (await fetch(`${url}/healthz`)).json()) as { updateSources?: Record<string, { state: string }> })
      .updateSources?.[unreachable]?.state;
  await waitFor(async () => (await state()) === 'stale', 'the source stale (1.8 s without a success)', 20_000);
  // a reload that changes [updates] starts the sources again
  writeFiles('ROT_KEY=first-key-0001\n', '', {
    extra: source(
      '\n\n[[updates.urls]]\nurl = "http://127.0.0.1:9/other.csv"\nformat = "retraction-watch-csv"\neveryMinutes = 60',
    ),
  });
  const taken = await reload('config.reloaded');
  expect(taken.updates).toBe(true);
  expect(await state()).toBe('stale');
});

test('a reload whose new and running update sources both fail to start: said, and the daemon goes on answering', async () => {
  const dropDir = join(dir.path, 'drop');
  writeFiles('ROT_KEY=first-key-0001\n', '', { top: `[updates]\ndropDir = ${JSON.stringify(dropDir)}` });
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  rmSync(dropDir, { recursive: true });
  writeFileSync(dropDir, 'not a folder any more');
  writeFiles('ROT_KEY=second-key-0002\n', '', {
    top: `[updates]\ndropDir = ${JSON.stringify(join(cfg.path, 'drop'))}`,
  });
  daemon.signal('SIGHUP');
  await waitForLog(daemon, '"event":"updates.sources_stopped"');
  expect(daemon.log()).toContain('"event":"config.reload_failed"');
  const status = (await askUpdates(url, 'first-key-0001')).status;
  expect(status).toBe(200);
  const health = async () => ((await (await fetch(`${url}/healthz`)).json()) as { warnings?: string[] }).warnings ?? [];
  expect((await health()).join(' ')).toContain('update sources: stopped');

  // while they still cannot start (the running [updates], its folder still a file), a reload's other changes
  // are taken all the same: a new key works
  writeFiles('ROT_KEY=third-key-0003\n', '', { top: `[updates]\ndropDir = ${JSON.stringify(dropDir)}` });
  await reload('config.reloaded');
  const third = (await askUpdates(url, 'third-key-0003')).status;
  expect(third).toBe(200);
  expect((await health()).join(' ')).toContain('update sources: stopped');

  // the folder fixed and the first config given back: its [updates] is the running one's, yet the sources start
  rmSync(dropDir);
  writeFiles('ROT_KEY=first-key-0001\n', '', { top: `[updates]\ndropDir = ${JSON.stringify(dropDir)}` });
  await reload('config.reloaded');
  expect((await health()).join(' ')).not.toContain('update sources: stopped');
  writeFileSync(
    join(dropDir, 'rw.csv'),
    readFileSync(join(import.meta.dir, '../fixtures/retraction_watch_sample.csv')),
  );
  await waitForLog(daemon, '"event":"updates.imported"', 30_000);
});
