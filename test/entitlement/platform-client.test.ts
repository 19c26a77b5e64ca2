import { afterEach, expect, test } from 'bun:test';
import { PlatformClient, TIMED_OUT } from '../../src/entitlement/platform-client.ts';

/**
 * A call whose socket ignores its abort signal is ended by the client's guard, past its deadline. Bun's own fetch
 * honours the signal, so fetch is replaced here by one that does not: the call's answer comes only after the guard.
 */

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

test('a call the guard ended is one time-out: its late answer is neither counted nor given', async () => {
  const client = new PlatformClient(
    {
      name: 'alpha',
      entitlementUrl: 'http://127.0.0.1:9/entitlements',
      entitlementSecret: 'a-shared-secret-0123456789',
      entitlementTimeoutMs: 30,
      entitlementConcurrency: 1,
      entitlementBatch: 20,
      entitlementCacheSeconds: 60,
    },
    { name: 'doi-holdings', userAgent: 'doi-holdings Entitlement API', breakerFailures: 1, breakerCooldownMs: 60_000, now: () => performance.now(), timeOfDay: () => Date.now() },
  );
  let answered = false;
  globalThis.fetch = (async () => {
    // the guard's time-out is a breaker failure, which opens this breaker: only then does the platform answer
    while (client.breaker.state !== 'open') await Bun.sleep(5);
    answered = true;
    return Response.json({ entitlements: [{ doi: '10.1000/x', entitled: 'yes' }] });
  }) as unknown as typeof fetch;

  const [batch] = client.ask([{ bare: '10.1000/x', key: '10.1000/x' }], {}, 'tool', performance.now() + 30);
  expect(await batch!.result).toEqual({ all: TIMED_OUT });
  expect(answered).toBe(true);
  const { ok, timeout, error, malformed } = client.figures.calls;
  expect({ ok, timeout, error, malformed }).toEqual({ ok: 0, timeout: 1, error: 0, malformed: 0 });
  expect([client.figures.latency.count, client.figures.breakerOpens]).toEqual([1, 1]);
});
