import { afterEach, expect, test } from 'bun:test';
import { PlatformClient, TIMED_OUT } from '../../../src/entitlement/platforms/platform-client.ts';

/**
 * A call whose socket ignores its abort signal is ended by the client's guard, past its deadline. Bun's own fetch
 * honours the signal, so fetch is replaced here by one that does not: the call's answer comes only after the guard.
 */

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

test('a call the guard ended is answered then, as one time-out: its late answer is neither counted nor given', async () => {
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
    {
      name: 'doi-holdings',
      userAgent: 'doi-holdings Entitlement API',
      breakerFailures: 1,
      breakerCooldownMs: 60_000,
      now: () => performance.now(),
      timeOfDay: () => Date.now(),
    },
  );
  // the platform answers only once the test has its result: a call that waited for the socket would never end
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let answered = false;
  globalThis.fetch = (async () => {
    await released;
    answered = true;
    return Response.json({ entitlements: [{ doi: '10.1000/x', entitled: 'yes' }] });
  }) as unknown as typeof fetch;

  const [batch] = client.ask([{ bare: '10.1000/x', key: '10.1000/x' }], {}, 'tool', performance.now() + 30);
  expect(await batch!.result).toEqual({ all: TIMED_OUT }); // answered at the guard, the socket still silent
  expect([answered, client.breaker.state]).toEqual([false, 'open']);
  release();
  while (!answered) await Bun.sleep(1);
  await Bun.sleep(5); // the late answer reaches the call, which drops it
  const { ok, timeout, error, malformed } = client.figures.calls;
  expect({ ok, timeout, error, malformed }).toEqual({ ok: 0, timeout: 1, error: 0, malformed: 0 });
  expect([client.figures.latency.count, client.figures.breakerOpens]).toEqual([1, 1]);
});
