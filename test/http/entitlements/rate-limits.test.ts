import { describe, expect, test } from 'bun:test';
import type { IntegratorSettings } from '../../../src/config/index.ts';
import { ApiKeys, type App } from '../../../src/http/index.ts';
import { IntegratorLimits } from '../../../src/http/limits/index.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { errorOf, INTEGRATORS, KEY, makeApp, post } from '../http-support.ts';

/**
 * An integrator's rate limit on the Entitlement API (docs/interface.md, "Rate limits"), through HTTP: the 429
 * with Retry-After and the draft's RateLimit fields, the 400 of a request no wait lets pass, and /metrics. The
 * limits' clock is the test's, so every figure is exact.
 */

const LIMITED_KEY = 'key-of-the-limited-one-0003';
const limited = (rateLimit: IntegratorSettings['rateLimit']): IntegratorSettings => ({
  name: 'limited',
  apiKey: LIMITED_KEY,
  updates: false,
  cache: true,
  counter: false,
  rateLimit,
});
const dois = (n: number) => Array.from({ length: n }, (_, i) => `10.5555/rate.${i}`);

const s = storePerTest();

function appWith(integrators: readonly IntegratorSettings[] | ApiKeys, clock: { t: number }): App {
  const integratorLimits = new IntegratorLimits(() => clock.t);
  return makeApp({ production: { store: s.store } }, { integrators, integratorLimits });
}

const ask = (app: App, n: number, key = LIMITED_KEY) =>
  post(app, '/v2.2/entitlements', JSON.stringify({ dois: dois(n) }), { key });

describe('requests a second', () => {
  test('within the burst: 200 with RateLimit-Policy and RateLimit; over it: 429 with Retry-After', async () => {
    const clock = { t: 0 };
    const app = appWith([...INTEGRATORS, limited({ requests: { perSecond: 0.001, burst: 2 } })], clock);
    for (const left of [1, 0]) {
      const r = await ask(app, 1);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('"requests";q=2;w=2000');
      expect(r.headers.get('ratelimit')).toBe(`"requests";r=${left}`);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(((await r.json()) as { entitlements: unknown[] }).entitlements).toHaveLength(1);
    }
    clock.t += 250_000; // a quarter of a token
    const over = await ask(app, 1);
    expect(over.headers.get('retry-after')).toBe('750');
    expect(over.headers.get('ratelimit')).toBe('"requests";r=0');
    expect(over.headers.get('ratelimit-policy')).toBe('"requests";q=2;w=2000');
    expect(await errorOf(over)).toEqual({
      status: 429,
      contentType: 'application/json; charset=utf-8',
      body: {
        statusCode: 429,
        error: 'RATE_LIMITED',
        message: 'over the rate limit of requests (0.001 requests a second, 2 at once); retry in 750 s',
      },
    });
    // another integrator is not limited, and is told of no limit
    const other = await ask(app, 1, KEY);
    expect(other.status).toBe(200);
    expect(other.headers.has('ratelimit')).toBe(false);
    expect(other.headers.has('ratelimit-policy')).toBe(false);
    // once the token has come, one more passes
    clock.t += 750_000;
    expect((await ask(app, 1)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(429);
  });

  test('a request refused before the limit (401, 400, 404 NOT_CONFIGURED) costs nothing', async () => {
    const clock = { t: 0 };
    const app = appWith([limited({ requests: { perSecond: 0.001, burst: 1 } })], clock);
    const bad = await post(app, '/v2.2/entitlements', '{"dois": [', { key: LIMITED_KEY });
    expect(bad.status).toBe(400);
    const shape = await post(app, '/v2.2/entitlements', '{"dois": []}', { key: LIMITED_KEY });
    expect(shape.status).toBe(400);
    const staging = await post(app, '/staging/v2.2/entitlements', '{"dois": ["10.5555/x"]}', { key: LIMITED_KEY });
    expect(staging.status).toBe(404);
    expect((await ask(app, 1)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(429);
  });

  test('both versions and both environments share the one bucket of an integrator', async () => {
    const clock = { t: 0 };
    const staging = stagingStore();
    const app = makeApp(
      { production: { store: s.store }, staging: { store: staging.store } },
      {
        integrators: [limited({ requests: { perSecond: 0.001, burst: 2 } })],
        integratorLimits: new IntegratorLimits(() => clock.t),
      },
    );
    try {
      const first = await post(app, '/v2.1/entitlements', '{"dois": ["10.5555/x"]}', { key: LIMITED_KEY });
      const second = await post(app, '/staging/v2.2/entitlements', '{"dois": ["10.5555/x"]}', { key: LIMITED_KEY });
      const third = await post(app, '/v2.2/entitlements', '{"dois": ["10.5555/x"]}', { key: LIMITED_KEY });
      expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    } finally {
      await staging.close();
    }
  });
});

describe('DOIs a second', () => {
  test('a request costs its entries; refused, it costs nothing; more than the burst is a 400', async () => {
    const clock = { t: 0 };
    const app = appWith(
      [limited({ requests: { perSecond: 100, burst: 100 }, dois: { perSecond: 0.5, burst: 5 } })],
      clock,
    );
    const first = await ask(app, 3);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe(
      '"requests";q=100;w=1, "dois";q=5;w=10;doi-holdings-unit="dois"',
    );
    expect(first.headers.get('ratelimit')).toBe('"requests";r=99, "dois";r=2');
    const over = await ask(app, 3);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('2'); // one DOI token short, at half a token a second
    expect(((await over.json()) as { message: string }).message).toBe(
      'over the rate limit of DOIs (this request has 3; 0.5 DOIs a second, 5 at once); retry in 2 s',
    );
    // the refused request took neither a request token nor DOI tokens
    const fits = await ask(app, 2);
    expect(fits.status).toBe(200);
    expect(fits.headers.get('ratelimit')).toBe('"requests";r=98, "dois";r=0');
    const never = await ask(app, 6);
    expect(await errorOf(never)).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: {
        statusCode: 400,
        error: 'BAD_REQUEST',
        message:
          '/dois: 6 DOIs given; your rate limit takes at most 5 in one request (0.5 DOIs a second, 5 at once): send at most 5 per request',
      },
    });
    expect(never.headers.has('retry-after')).toBe(false);
  });

  test('/metrics counts the refusals per integrator and limit', async () => {
    const clock = { t: 0 };
    const app = appWith(
      [limited({ requests: { perSecond: 0.001, burst: 2 }, dois: { perSecond: 0.001, burst: 3 } })],
      clock,
    );
    expect((await ask(app, 3)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(429); // DOIs
    expect((await ask(app, 4)).status).toBe(400); // more than the burst
    expect((await ask(app, 1)).status).toBe(429); // DOIs again
    clock.t += 3_000_000; // both buckets full again
    expect((await ask(app, 1)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(429); // requests (a DOI token is left)
    const text = await (await app.handle(new Request('http://localhost/metrics'))).text();
    const samples = text.split('\n').filter((l) => l.startsWith('doi_holdings_entitlement_rate_limited_total{'));
    expect(samples.sort()).toEqual([
      'doi_holdings_entitlement_rate_limited_total{integrator="limited",limit="doi_burst"} 1',
      'doi_holdings_entitlement_rate_limited_total{integrator="limited",limit="dois"} 2',
      'doi_holdings_entitlement_rate_limited_total{integrator="limited",limit="requests"} 1',
    ]);
  });
});

describe('a reload', () => {
  test('the same limit keeps its bucket; a changed one starts full', async () => {
    const clock = { t: 0 };
    const keys = new ApiKeys([limited({ requests: { perSecond: 0.001, burst: 1 } })]);
    const app = appWith(keys, clock);
    expect((await ask(app, 1)).status).toBe(200);
    expect((await ask(app, 1)).status).toBe(429);
    // the same settings, read again: new objects, the same limit
    keys.replace([limited({ requests: { perSecond: 0.001, burst: 1 } })]);
    expect((await ask(app, 1)).status).toBe(429);
    keys.replace([limited({ requests: { perSecond: 0.001, burst: 3 } })]);
    const changed = await ask(app, 1);
    expect(changed.status).toBe(200);
    expect(changed.headers.get('ratelimit')).toBe('"requests";r=2');
    // the limit taken away: no limit, no fields
    keys.replace([limited(undefined)]);
    for (let i = 0; i < 5; i++) {
      const free = await ask(app, 1);
      expect(free.status).toBe(200);
      expect(free.headers.has('ratelimit')).toBe(false);
    }
  });
});

/** A staging store of the test's own, beside storePerTest's production one. */
function stagingStore() {
  const dir = tempDir();
  const store = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  return {
    store,
    close: async () => {
      await store.close();
      dir.remove();
    },
  };
}
