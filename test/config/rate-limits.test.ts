import { describe, expect, test } from 'bun:test';
import { FaultError } from '../../src/base/fault.ts';
import { resolveConfig } from '../../src/config/index.ts';
import { MAX_DOIS_PER_REQUEST } from '../../src/doi/index.ts';

/** The rate limits' settings (README, "Configuration reference"): read, defaulted, and every mistake named. */

const BASE = {
  buckets: { production: { kind: 'local', path: 'bucket' } },
  platforms: [{ name: 'acme' }],
};

function load(raw: object) {
  return resolveConfig({ ...BASE, ...raw }, '/etc/doi-holdings/c.toml', {});
}

function problems(raw: object): string[] {
  try {
    load(raw);
  } catch (e) {
    if (!(e instanceof FaultError)) throw e;
    expect(e.code).toBe('CONFIG_INVALID');
    return e.message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
  }
  throw new Error('expected the config to be rejected');
}

const integrator = (rateLimit: unknown) => ({ integrators: [{ name: 'one', apiKey: 'key-0123456789', rateLimit }] });

describe('integrator rate limits', () => {
  test('absent: no limit', () => {
    expect(load(integrator(undefined)).integrators[0]!.rateLimit).toBeUndefined();
  });

  test('given in full, taken as given', () => {
    const c = load(integrator({ requestsPerSecond: 0.5, requestBurst: 3, doisPerSecond: 200, doiBurst: 400 }));
    expect(c.integrators[0]!.rateLimit).toEqual({
      requests: { perSecond: 0.5, burst: 3 },
      dois: { perSecond: 200, burst: 400 },
    });
  });

  test('bursts default to a second worth; a DOI burst to at least one full request', () => {
    expect(load(integrator({ requestsPerSecond: 2.5 })).integrators[0]!.rateLimit).toEqual({
      requests: { perSecond: 2.5, burst: 3 },
    });
    expect(load(integrator({ requestsPerSecond: 0.01 })).integrators[0]!.rateLimit!.requests!.burst).toBe(1);
    expect(load(integrator({ doisPerSecond: 10 })).integrators[0]!.rateLimit).toEqual({
      dois: { perSecond: 10, burst: MAX_DOIS_PER_REQUEST },
    });
    expect(load(integrator({ doisPerSecond: 1000 })).integrators[0]!.rateLimit!.dois!.burst).toBe(1000);
  });

  test('every mistake is named with its path', () => {
    expect(problems(integrator({}))).toEqual([
      '/integrators/0/rateLimit: give requestsPerSecond, doisPerSecond or both (an empty rateLimit limits nothing)',
    ]);
    expect(problems(integrator({ requestBurst: 2, doiBurst: 100 }))).toEqual([
      '/integrators/0/rateLimit: give requestsPerSecond, doisPerSecond or both (an empty rateLimit limits nothing)',
      '/integrators/0/rateLimit/requestBurst: given without requestsPerSecond, the rate it is the burst of',
      '/integrators/0/rateLimit/doiBurst: given without doisPerSecond, the rate it is the burst of',
    ]);
    expect(problems(integrator({ requestsPerSecond: 0, doisPerSecond: -1, doiBurst: 0.5 }))).toEqual([
      '/integrators/0/rateLimit/requestsPerSecond: Expected number to be greater than 0',
      '/integrators/0/rateLimit/doisPerSecond: Expected number to be greater than 0',
      '/integrators/0/rateLimit/doiBurst: Expected integer',
    ]);
    // TOML's inf and nan are not numbers to the schema
    for (const odd of [Infinity, Number.NaN])
      expect(problems(integrator({ requestsPerSecond: odd }))).toEqual([
        '/integrators/0/rateLimit/requestsPerSecond: Expected number',
      ]);
    expect(problems(integrator({ requestsPerSecond: 2_000_000 }))).toEqual([
      '/integrators/0/rateLimit/requestsPerSecond: Expected number to be less or equal to 1000000',
    ]);
    expect(problems(integrator({ requestsPerSecond: 1, perMinute: 5 }))).toEqual([
      '/integrators/0/rateLimit/perMinute: Unexpected property',
    ]);
  });
});

describe('platform rate limits', () => {
  const platform = (over: object) => ({ platforms: [{ name: 'acme', ...over }] });

  test('absent: no limit; given: its burst by default a second worth, at least 1', () => {
    expect(load(platform({})).platforms[0]!.entitlementRate).toBeUndefined();
    expect(load(platform({ entitlementRatePerSecond: 20 })).platforms[0]!.entitlementRate).toEqual({
      perSecond: 20,
      burst: 20,
    });
    expect(load(platform({ entitlementRatePerSecond: 0.2 })).platforms[0]!.entitlementRate).toEqual({
      perSecond: 0.2,
      burst: 1,
    });
    expect(
      load(platform({ entitlementRatePerSecond: 5, entitlementRateBurst: 1 })).platforms[0]!.entitlementRate,
    ).toEqual({ perSecond: 5, burst: 1 });
  });

  test('mistakes are named with their path', () => {
    expect(problems(platform({ entitlementRateBurst: 4 }))).toEqual([
      '/platforms/0/entitlementRateBurst: given without entitlementRatePerSecond, the rate it is the burst of',
    ]);
    expect(problems(platform({ entitlementRatePerSecond: 0, entitlementRateBurst: 0 }))).toEqual([
      '/platforms/0/entitlementRatePerSecond: Expected number to be greater than 0',
      '/platforms/0/entitlementRateBurst: Expected integer to be greater or equal to 1',
    ]);
  });
});

describe('the status page limit and trusted proxies', () => {
  test('absent: neither; given: read, the burst by default a second worth', () => {
    const none = load({});
    expect(none.statusPage).toBeUndefined();
    expect(none.server.trustedProxies).toBeUndefined();
    const c = load({
      statusPage: { rateLimit: { requestsPerSecond: 5 } },
      server: { trustedProxies: ['10.0.0.0/8', '2001:db8::/32', '::1', '192.0.2.7'] },
    });
    expect(c.statusPage).toEqual({ rateLimit: { perSecond: 5, burst: 5 } });
    expect(c.server.trustedProxies).toEqual(['10.0.0.0/8', '2001:db8::/32', '::1', '192.0.2.7']);
    expect(load({ statusPage: { rateLimit: { requestsPerSecond: 1, requestBurst: 30 } } }).statusPage).toEqual({
      rateLimit: { perSecond: 1, burst: 30 },
    });
  });

  test('a proxy that is no address or block, and a limit without its rate, are named', () => {
    expect(
      problems({ server: { trustedProxies: ['10.0.0.0/33', 'proxy.example', '10.0.0.0/8/1', '::1/129', '10.1/8'] } }),
    ).toEqual(
      ['10.0.0.0/33', 'proxy.example', '10.0.0.0/8/1', '::1/129', '10.1/8'].map(
        (p, i) =>
          `/server/trustedProxies/${i}: ${JSON.stringify(p)} is not an address or a CIDR block (e.g. 10.0.0.0/8, 2001:db8::/32, ::1)`,
      ),
    );
    expect(problems({ statusPage: { rateLimit: { requestBurst: 3 } } })).toEqual([
      '/statusPage/rateLimit/requestsPerSecond: Expected required property',
      '/statusPage/rateLimit/requestsPerSecond: Expected number',
    ]);
  });
});
