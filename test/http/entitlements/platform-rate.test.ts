import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { DEFAULT_ENTITLEMENTS, type PlatformSettings } from '../../../src/config/index.ts';
import { Entitlements } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { KEY_NO_UPDATES, makeApp, post } from '../http-support.ts';

/**
 * A platform's declared rate (`[[platforms]] entitlementRatePerSecond`, docs/interface.md, "For platforms"), against
 * a loopback platform: calls wait for their turn within the DOIs' time-out; a call whose turn would come too late
 * is not sent, and its DOIs answer as a time-out does. The entitlement side runs on the test's clock, which stands
 * still, so every turn is decided by the figures alone.
 */

const SECRET = 'a-shared-secret-of-the-platform-0123456789';
const s = storePerTest();
let platform: PlatformServer;
let clock: number;

beforeAll(() => {
  platform = new PlatformServer(SECRET);
});
afterAll(async () => {
  await platform.stop();
});
beforeEach(() => {
  clock = 1_800_000_000_000;
  platform.calls.length = 0;
  platform.mode = { kind: 'answer', entitled: () => 'yes' };
  s.store.applyFilesSync([
    preparedFile(
      Array.from({ length: 5 }, (_, i) => ({ doi: `10.2000/rated-${i}`, accessType: 'paid' })),
      { platform: 'paid' },
    ),
  ]);
});

function appWith(over: Partial<PlatformSettings>): { app: App; entitlements: Entitlements } {
  const paid: PlatformSettings = {
    name: 'paid',
    entitlementUrl: platform.url,
    entitlementSecret: SECRET,
    entitlementTimeoutMs: 1000,
    entitlementConcurrency: 8,
    entitlementBatch: 1, // a call per DOI: each DOI needs a turn of its own
    entitlementCacheSeconds: 0,
    ...over,
  };
  const entitlements = new Entitlements([paid], DEFAULT_ENTITLEMENTS, () => clock);
  return { app: makeApp({ production: { store: s.store } }, { entitlements }), entitlements };
}

type Obj = { doi: string; statusCode: number; entitled?: string; source?: string; accessType?: string };

async function ask(app: App, dois: string[]): Promise<Obj[]> {
  const r = await post(app, '/v2.2/entitlements', JSON.stringify({ dois }), { key: KEY_NO_UPDATES });
  expect(r.status).toBe(200);
  return ((await r.json()) as { entitlements: Obj[] }).entitlements;
}

const TIMED_OUT = { statusCode: 504, entitled: 'maybe', accessType: 'paid', source: 'unknown' };
const ANSWERED = { statusCode: 200, entitled: 'yes', source: 'service_request' };

describe('a platform rate', () => {
  test('calls beyond the burst whose turn would come after their deadline are not sent: answered as a time-out', async () => {
    const { app, entitlements } = appWith({ entitlementRate: { perSecond: 0.001, burst: 2 } });
    const got = await ask(app, ['10.2000/rated-0', '10.2000/rated-1', '10.2000/rated-2']);
    expect(got[0]).toMatchObject(ANSWERED);
    expect(got[1]).toMatchObject(ANSWERED);
    expect(got[2]).toEqual({ doi: '10.2000/rated-2', ...TIMED_OUT });
    expect(platform.calls.map((c) => c.body.dois)).toEqual([['10.2000/rated-0'], ['10.2000/rated-1']]);
    const client = entitlements.clients.get('paid')!;
    expect(client.figures.calls.rate_limited).toBe(1);
    expect(client.breaker.state).toBe('closed'); // our limit, not the platform's failure
    // a token later (1,000 s on the entitlement clock), one more call goes
    clock += 1_000_000;
    const later = await ask(app, ['10.2000/rated-3', '10.2000/rated-4']);
    expect(later.map((o) => o.statusCode)).toEqual([200, 504]);
    expect(platform.calls).toHaveLength(3);
    const metrics = await (await app.handle(new Request('http://localhost/metrics'))).text();
    expect(metrics).toContain('doi_holdings_platform_calls_total{platform="paid",outcome="rate_limited"} 2');
  });

  test('calls wait for their turn within the time-out; those whose turn comes too late answer as a time-out', async () => {
    // a turn every 500 ms, one at once; 900 ms to answer (a call is worth sending with 50 ms left): the first
    // call goes at once, the second waits its 500 ms, the third's turn (at 1,000 ms) is past its deadline
    const { app, entitlements } = appWith({
      entitlementRate: { perSecond: 2, burst: 1 },
      entitlementTimeoutMs: 900,
    });
    const got = await ask(app, ['10.2000/rated-0', '10.2000/rated-1', '10.2000/rated-2']);
    expect(got.map((o) => o.statusCode)).toEqual([200, 200, 504]);
    expect(got[2]).toEqual({ doi: '10.2000/rated-2', ...TIMED_OUT });
    expect(platform.calls).toHaveLength(2);
    expect(entitlements.clients.get('paid')!.figures.calls).toMatchObject({ ok: 2, rate_limited: 1, timeout: 0 });
  });

  test('without a rate, every call goes at once', async () => {
    const { app } = appWith({});
    const got = await ask(app, ['10.2000/rated-0', '10.2000/rated-1', '10.2000/rated-2', '10.2000/rated-3']);
    expect(got.map((o) => o.statusCode)).toEqual([200, 200, 200, 200]);
    expect(platform.calls).toHaveLength(4);
  });

  test('a reload that leaves the platform as it was keeps its turns taken; a new rate starts afresh', async () => {
    const rated: Partial<PlatformSettings> = { entitlementRate: { perSecond: 0.001, burst: 1 } };
    const { app, entitlements } = appWith(rated);
    expect((await ask(app, ['10.2000/rated-0']))[0]!.statusCode).toBe(200);
    const settings = entitlements.clients.get('paid')!.settings;
    entitlements.reconfigure([{ ...settings, entitlementRate: { perSecond: 0.001, burst: 1 } }], DEFAULT_ENTITLEMENTS);
    expect((await ask(app, ['10.2000/rated-1']))[0]!.statusCode).toBe(504);
    entitlements.reconfigure([{ ...settings, entitlementRate: { perSecond: 0.001, burst: 2 } }], DEFAULT_ENTITLEMENTS);
    expect((await ask(app, ['10.2000/rated-2']))[0]!.statusCode).toBe(200);
  });
});
