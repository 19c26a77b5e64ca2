import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { startDaemon, type TestConfig, tempDir, waitFor, waitForLog, writeConfig } from '../support/fixtures.ts';

/**
 * The rate limits in the real daemon, from its config file (docs/operations.md, "Rate limits"): an integrator's
 * limit and the status page's, a SIGHUP that changes the integrator's limit (live) and the status page's (named as
 * needing a restart). A burst of 2 at one token in 1,000 s: the outcomes do not depend on the machine's speed.
 */

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let daemon: ReturnType<typeof startDaemon> | undefined;

beforeEach(() => {
  dir = tempDir('doi-holdings-rate-limits-');
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  dir.remove();
});

function write(burst: number, pagesBurst: number): void {
  cfg = writeConfig(
    dir.path,
    `rateLimit = { requestsPerSecond = 0.001, requestBurst = ${burst} }

[statusPage]
rateLimit = { requestsPerSecond = 0.001, requestBurst = ${pagesBurst} }
`,
  );
  // writeConfig's text ends inside the `tester` integrator's table: rateLimit is that integrator's
  expect(readFileSync(cfg.path, 'utf8')).toContain('apiKey = "test-key-123"\nupdates = true\nrateLimit');
}

const events = (event: string) =>
  daemon!
    .log()
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('an integrator limit and a status page limit from the config; a reload changes the first live', async () => {
  write(2, 1);
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!.replace(/\/$/, '');
  const ask = () =>
    fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
      body: '{"dois":["10.1234/x"]}',
    });
  const first = await ask();
  expect(first.status).toBe(200);
  expect(first.headers.get('ratelimit-policy')).toBe('"requests";q=2;w=2000');
  expect(first.headers.get('ratelimit')).toBe('"requests";r=1');
  expect((await ask()).status).toBe(200);
  const over = await ask();
  expect(over.status).toBe(429);
  expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(900);
  expect(((await over.json()) as { error: string }).error).toBe('RATE_LIMITED');

  expect((await fetch(`${url}/doi/10.1234/x`)).status).toBe(404);
  expect((await fetch(`${url}/doi/10.1234/x`)).status).toBe(429);

  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toContain('doi_holdings_entitlement_rate_limited_total{integrator="tester",limit="requests"} 1');
  expect(metrics).toContain('doi_holdings_status_page_rate_limited_total 1');

  // a reload: the integrator's new burst is taken at once (a changed limit starts full); the status page's needs
  // a restart, and is named so
  write(5, 3);
  const before = events('config.reloaded').length;
  daemon.signal('SIGHUP');
  await waitFor(() => events('config.reloaded').length > before, 'config.reloaded');
  expect(events('config.reloaded').at(-1)!.integrators).toEqual({ added: [], removed: [], changed: ['tester'] });
  expect(events('config.restart_needed').at(-1)!.fields).toEqual(['statusPage']);
  const after = await ask();
  expect(after.status).toBe(200);
  expect(after.headers.get('ratelimit')).toBe('"requests";r=4');
  expect((await fetch(`${url}/doi/10.1234/x`)).status).toBe(429);
});

test('a config with a bad trusted proxy or an empty rate limit does not start, and says why', async () => {
  cfg = writeConfig(dir.path, 'rateLimit = {}\n');
  writeFileSync(
    cfg.path,
    readFileSync(cfg.path, 'utf8').replace('[server]\n', '[server]\ntrustedProxies = ["10.0.0.0/40"]\n'),
  );
  daemon = startDaemon(cfg.path);
  const code = await daemon.exited;
  expect(code).toBe(2);
  expect(daemon.log()).toContain(
    [
      '  /integrators/0/rateLimit: give requestsPerSecond, doisPerSecond or both (an empty rateLimit limits nothing)',
      '  /server/trustedProxies/0: "10.0.0.0/40" is not an address or a CIDR block (e.g. 10.0.0.0/8, 2001:db8::/32, ::1)',
    ].join('\n'),
  );
});
