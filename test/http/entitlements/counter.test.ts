import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DEFAULT_ENTITLEMENTS, type PlatformSettings } from '../../../src/config/index.ts';
import { Entitlements, EntitlementsResponse } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import type { Store } from '../../../src/store/index.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { INTEGRATORS, KEY_NO_UPDATES, makeApp, post } from '../http-support.ts';

/**
 * `[[integrators]] counter = true` (issue 51): every use is one the platform can count. Through the Entitlement API
 * over a real store, against a loopback platform (`alpha`, with an Entitlement API) that counts its calls and
 * answers with a customerID; `zeta` has no Entitlement API. A counter integrator takes nothing from the answer
 * cache, is answered by alpha for alpha's open holdings, and sees alpha's customerID; a normal integrator, beside
 * it, is answered as before.
 */

const SECRET = 'a-shared-secret-of-alpha-0123456789';
const ORG = { ipv4: '192.0.2.10' };
const KEY_COUNTER = 'key-of-a-counter-0003';
const NORMAL = KEY_NO_UPDATES;
const checkResponse = TypeCompiler.Compile(EntitlementsResponse);
type Obj = Record<string, unknown> & { source?: string };

/** this test's store (storePerTest opens and removes it) */
let store: Store;
const temp = storePerTest();
let alpha: PlatformServer;

function platforms(alphaOver: Partial<PlatformSettings> = {}): PlatformSettings[] {
  const base = {
    // far past any loopback answer: the answers here must not depend on how busy the machine is
    entitlementTimeoutMs: 30_000,
    entitlementConcurrency: 8,
    entitlementBatch: 20,
    entitlementCacheSeconds: 0,
  };
  return [
    { name: 'alpha', ...base, entitlementUrl: alpha.url, entitlementSecret: SECRET, ...alphaOver },
    { name: 'zeta', ...base },
  ];
}

function appWith(alphaOver: Partial<PlatformSettings> = {}): { app: App; entitlements: Entitlements } {
  const entitlements = new Entitlements(platforms(alphaOver), DEFAULT_ENTITLEMENTS, () => 1_800_000_000_000);
  const integrators = [
    ...INTEGRATORS,
    { name: 'usage-reports', apiKey: KEY_COUNTER, updates: false, cache: true, counter: true },
  ];
  return { app: makeApp({ production: { store } }, { entitlements, integrators }), entitlements };
}

/** `body`: the request's own text (to send a body the plain-body scanner does not take) */
async function ask(app: App, key: string, dois: unknown[], body?: string): Promise<Obj[]> {
  const r = await post(app, '/v2.2/entitlements', body ?? JSON.stringify({ org: ORG, dois }), { key });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  const parsed = JSON.parse(text) as { entitlements: Obj[] };
  expect([...checkResponse.Errors(parsed)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  return parsed.entitlements;
}

const calledDois = () => alpha.calls.flatMap((c) => c.body.dois);

beforeAll(() => {
  alpha = new PlatformServer(SECRET);
});
afterAll(async () => {
  await alpha.stop();
});
beforeEach(() => {
  store = temp.store;
  alpha.calls.length = 0;
  alpha.mode = {
    kind: 'answer',
    entitled: () => 'yes',
    extra: () => ({
      org: { customerID: 'cust-42' },
      licenses: [{ type: 'cc_by', url: 'https://cc.example/by', startDate: '2021-03-01' }],
    }),
  };
  store.applyFilesSync([
    preparedFile(
      [
        { doi: '10.1000/alpha-paid', accessType: 'paid' },
        { doi: '10.1000/alpha-open', accessType: 'open', vor: [{ url: 'https://alpha.example/deposit/open.pdf' }] },
        { doi: '10.1000/both-open', accessType: 'free', vor: [{ url: 'https://alpha.example/deposit/both.pdf' }] },
        { doi: '10.1000/open-here-paid-there', accessType: 'open' },
      ],
      { platform: 'alpha' },
    ),
    preparedFile(
      [
        { doi: '10.1000/zeta-open', accessType: 'open', vor: [{ url: 'https://zeta.example/deposit/open.pdf' }] },
        { doi: '10.1000/zeta-paid', accessType: 'paid' },
        { doi: '10.1000/both-open', accessType: 'open', vor: [{ url: 'https://zeta.example/deposit/both.pdf' }] },
        { doi: '10.1000/open-here-paid-there', accessType: 'paid' },
      ],
      { platform: 'zeta' },
    ),
  ]);
});

describe('a counter integrator', () => {
  test("sees the platform's customerID in the answer's org, after the fields it sent; a normal integrator does not", async () => {
    const { app } = appWith();
    const licenses = [{ type: 'cc_by', url: 'https://cc.example/by', startDate: '2021-03-01' }];
    const [counted] = await ask(app, KEY_COUNTER, ['10.1000/alpha-paid']);
    expect(counted).toEqual({
      doi: '10.1000/alpha-paid',
      statusCode: 200,
      entitled: 'yes',
      accessType: 'paid',
      source: 'service_request',
      licenses,
      org: { ipv4: '192.0.2.10', customerID: 'cust-42' },
    });
    expect(Object.keys(counted!.org as object)).toEqual(['ipv4', 'customerID']);
    // an empty org: the customerID alone
    const [bare] = await ask(app, KEY_COUNTER, [], JSON.stringify({ dois: ['10.1000/alpha-paid'] }));
    expect(bare!.org).toEqual({ customerID: 'cust-42' });
    const [normal] = await ask(app, NORMAL, ['10.1000/alpha-paid']);
    expect(normal).toEqual({ ...counted, org: ORG });
    // a customerID the platform gives malformed is left out; the answer stands
    alpha.mode = { kind: 'answer', entitled: () => 'no', extra: () => ({ org: { customerID: 42 } }) };
    expect((await ask(app, KEY_COUNTER, ['10.1000/alpha-paid']))[0]).toMatchObject({ entitled: 'no', org: ORG });
  });

  test("is never served from the answer cache and fills none: each repeat reaches the platform, while a normal integrator's second is from the cache", async () => {
    const { app, entitlements } = appWith({ entitlementCacheSeconds: 300 });
    const cache = entitlements.forStore(store).cache;
    for (let i = 1; i <= 3; i++) {
      expect((await ask(app, KEY_COUNTER, ['10.1000/alpha-paid']))[0]!.source).toBe('service_request');
      expect(alpha.calls).toHaveLength(i);
    }
    expect(cache.size).toBe(0);
    expect((await ask(app, NORMAL, ['10.1000/alpha-paid']))[0]!.source).toBe('service_request');
    expect((await ask(app, NORMAL, ['10.1000/alpha-paid']))[0]!.source).toBe('service_cache');
    expect(alpha.calls).toHaveLength(4);
    // the answer the normal integrator cached is not the counter integrator's
    expect((await ask(app, KEY_COUNTER, ['10.1000/alpha-paid']))[0]).toMatchObject({
      source: 'service_request',
      org: { ...ORG, customerID: 'cust-42' },
    });
    expect(alpha.calls).toHaveLength(5);
  });

  test('has an open DOI of a platform with an Entitlement API asked; a normal integrator has it answered from the deposit', async () => {
    const { app } = appWith();
    // a plain body (read from its bytes) and object entries (parsed): both classify it the same way
    for (const entry of ['10.1000/ALPHA-OPEN', { doi: '10.1000/ALPHA-OPEN', uid: 'u' }]) {
      alpha.calls.length = 0;
      expect((await ask(app, NORMAL, [entry]))[0]).toMatchObject({
        statusCode: 200,
        entitled: 'yes',
        accessType: 'open',
        source: 'oa_platform',
        vor: [{ url: 'https://alpha.example/deposit/open.pdf' }],
      });
      expect(alpha.calls).toHaveLength(0);
      const [counted] = await ask(app, KEY_COUNTER, [entry]);
      // the platform's answer, with the deposited access type (the platform gave none); the deposit's vor is not served
      expect(counted).toMatchObject({
        statusCode: 200,
        entitled: 'yes',
        accessType: 'open',
        source: 'service_request',
      });
      expect(counted!.vor).toBeUndefined();
      expect(calledDois()).toEqual(['10.1000/ALPHA-OPEN']);
    }
  });

  test('an open DOI whose platform fails is maybe, unknown: the deposit does not stand in for the call', async () => {
    alpha.mode = { kind: 'raw', status: 503, body: 'down' };
    const { app } = appWith();
    expect((await ask(app, KEY_COUNTER, ['10.1000/alpha-open']))[0]).toEqual({
      doi: '10.1000/alpha-open',
      statusCode: 200,
      entitled: 'maybe',
      accessType: 'open',
      source: 'unknown',
    });
    expect((await ask(app, NORMAL, ['10.1000/alpha-open']))[0]!.source).toBe('oa_platform');
  });
});

describe('a platform without an Entitlement API', () => {
  test('answers from its deposits for both integrators, and its paid DOIs are publisher_not_supported for both', async () => {
    const { app } = appWith();
    const dois = ['10.1000/zeta-open', '10.1000/zeta-paid'];
    const normal = await ask(app, NORMAL, dois);
    expect(normal.map((o) => [o.statusCode, o.entitled, o.accessType, o.source])).toEqual([
      [200, 'yes', 'open', 'oa_platform'],
      [200, 'maybe', 'paid', 'publisher_not_supported'],
    ]);
    expect(normal[0]!.vor).toEqual([{ url: 'https://zeta.example/deposit/open.pdf' }]);
    expect(await ask(app, KEY_COUNTER, dois)).toEqual(normal);
    expect(alpha.calls).toHaveLength(0);
  });

  test("answers a counter integrator from its deposit where both hold a DOI so; a normal integrator gets the first by name (alpha's)", async () => {
    const { app } = appWith();
    expect((await ask(app, NORMAL, ['10.1000/both-open']))[0]).toMatchObject({
      accessType: 'free',
      source: 'oa_platform',
      vor: [{ url: 'https://alpha.example/deposit/both.pdf' }],
    });
    expect((await ask(app, KEY_COUNTER, ['10.1000/both-open']))[0]).toMatchObject({
      accessType: 'open',
      source: 'oa_platform',
      vor: [{ url: 'https://zeta.example/deposit/both.pdf' }],
    });
    expect(alpha.calls).toHaveLength(0);
  });

  test("beside an open holding of a platform with one: that platform is asked, and its yes wins over zeta's publisher_not_supported", async () => {
    const { app } = appWith();
    expect((await ask(app, NORMAL, ['10.1000/open-here-paid-there']))[0]!.source).toBe('oa_platform');
    expect((await ask(app, KEY_COUNTER, ['10.1000/open-here-paid-there']))[0]).toMatchObject({
      entitled: 'yes',
      accessType: 'open',
      source: 'service_request',
    });
    expect(calledDois()).toEqual(['10.1000/open-here-paid-there']);
  });
});
