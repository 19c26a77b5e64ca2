import { expect, test } from 'bun:test';
import { type Config, resolveConfig } from '../../src/config/index.ts';
import { configChanges } from '../../src/daemon/config-changes.ts';

/** What a reload can take live and what needs a restart (src/daemon/config-changes.ts). */

function config(over: Record<string, unknown> = {}): Config {
  return resolveConfig(
    {
      server: { listen: '127.0.0.1:8080' },
      buckets: { production: { kind: 'local', path: 'bucket' } },
      platforms: [
        { name: 'acme' },
        { name: 'beta', entitlementUrl: 'https://beta.example/e', entitlementSecretEnv: 'B' },
      ],
      integrators: [{ name: 'tool', apiKey: 'tool-key-0001' }],
      ...over,
    },
    '/etc/doi-holdings/c.toml',
    { B: 'beta-secret' },
  );
}

test('an unchanged config changes nothing', () => {
  expect(configChanges(config(), config())).toEqual({
    restartOnly: [],
    integrators: { added: [], removed: [], changed: [] },
    platforms: { added: [], removed: [], changed: [] },
    entitlements: false,
    updates: false,
  });
});

test('live changes are named per integrator and platform; restart-only settings by config path', () => {
  const next = config({
    server: { listen: '0.0.0.0:8080', maxBodyBytes: 2048, bodyTimeoutMs: 5000, drainSeconds: 0 },
    store: { dir: 'elsewhere' },
    buckets: { production: { kind: 'local', path: 'bucket' }, staging: { kind: 'local', path: 'staging' } },
    platforms: [
      { name: 'beta', entitlementUrl: 'https://beta.example/v2', entitlementSecretEnv: 'B' },
      { name: 'gamma' },
    ],
    integrators: [
      { name: 'tool', apiKey: 'tool-key-0002' },
      { name: 'new', apiKey: 'new-key-0001' },
    ],
    entitlements: { breakerFailures: 3 },
    updates: { urls: [{ url: 'https://example.org/rw.csv', format: 'retraction-watch-csv' }] },
  });
  const c = configChanges(config(), next);
  expect(c.restartOnly).toEqual([
    'server.listen',
    'server.maxBodyBytes',
    'server.bodyTimeoutMs',
    'server.drainSeconds',
    'store.dir',
    'buckets.staging',
  ]);
  expect(c.integrators).toEqual({ added: ['new'], removed: [], changed: ['tool'] });
  expect(c.platforms).toEqual({ added: ['gamma'], removed: ['acme'], changed: ['beta'] });
  expect(c.entitlements).toBe(true);
  expect(c.updates).toBe(true);
});

test("the change feed's keep period is read by the store when it opens: a changed one needs a restart, and is named so", () => {
  const next = config({ updates: { changeFeedKeepDays: 30 } });
  const c = configChanges(config(), next);
  expect(c.restartOnly).toEqual(['updates.changeFeedKeepDays']);
  // nothing else in [updates] changed, so nothing is reloaded live for it
  expect(c.updates).toBe(false);
});

test('rate limits: an integrator or platform rate changes live with its owner; the status page limit and trusted proxies need a restart', () => {
  const next = config({
    server: { listen: '127.0.0.1:8080', trustedProxies: ['10.0.0.0/8'] },
    statusPage: { rateLimit: { requestsPerSecond: 5 } },
    platforms: [
      { name: 'acme' },
      {
        name: 'beta',
        entitlementUrl: 'https://beta.example/e',
        entitlementSecretEnv: 'B',
        entitlementRatePerSecond: 10,
      },
    ],
    integrators: [{ name: 'tool', apiKey: 'tool-key-0001', rateLimit: { requestsPerSecond: 2 } }],
  });
  const c = configChanges(config(), next);
  expect(c.restartOnly).toEqual(['server.trustedProxies', 'statusPage']);
  expect(c.integrators).toEqual({ added: [], removed: [], changed: ['tool'] });
  expect(c.platforms).toEqual({ added: [], removed: [], changed: ['beta'] });
});
