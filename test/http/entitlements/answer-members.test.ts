import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DEFAULT_ENTITLEMENTS, type PlatformSettings } from '../../../src/config/index.ts';
import { Entitlements, EntitlementsResponse } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import type { Store } from '../../../src/store/index.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { KEY_NO_UPDATES, makeApp, post } from '../http-support.ts';

/**
 * A platform's `av` and `licenses` reach the integrator (issue 51): through the Entitlement API over a real store,
 * against a loopback platform (test/support/platform-server.ts) that answers with them. They come in GetFTR's member
 * order, fit the published schema, lose only their malformed items, and are kept in the answer cache with the
 * answer, their bytes counted.
 */

const SECRET = 'a-shared-secret-of-alpha-0123456789';
const ORG = { ipv4: '192.0.2.10' };
const checkResponse = TypeCompiler.Compile(EntitlementsResponse);
type Obj = Record<string, unknown>;

const AV = [
  { url: 'https://alpha.example/accepted/1.pdf', contentType: 'application/pdf' },
  { url: 'http://alpha.example/preprint/1' },
];
const LICENSES = [
  { type: 'cc_by', url: 'https://creativecommons.org/licenses/by/4.0/', startDate: '2021-03-01' },
  { type: 'publisher-tdm', url: 'https://alpha.example/tdm', startDate: '2024-02-29' },
];

/** this test's store (storePerTest opens and removes it) */
let store: Store;
const temp = storePerTest();
let alpha: PlatformServer;

function platforms(cacheSeconds = 0): PlatformSettings[] {
  return [
    {
      name: 'alpha',
      entitlementUrl: alpha.url,
      entitlementSecret: SECRET,
      // far past any loopback answer: the answers here must not depend on how busy the machine is
      entitlementTimeoutMs: 30_000,
      entitlementConcurrency: 8,
      entitlementBatch: 20,
      entitlementCacheSeconds: cacheSeconds,
    },
  ];
}

function appWith(cacheSeconds = 0): { app: App; entitlements: Entitlements } {
  const entitlements = new Entitlements(platforms(cacheSeconds), DEFAULT_ENTITLEMENTS, () => 1_800_000_000_000);
  return { app: makeApp({ production: { store } }, { entitlements }), entitlements };
}

/** The reply's text and its entries, checked against the published schema. */
async function ask(app: App, dois: unknown[]): Promise<{ text: string; entries: Obj[] }> {
  const r = await post(app, '/v2.2/entitlements', JSON.stringify({ org: ORG, dois }), { key: KEY_NO_UPDATES });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  const body = JSON.parse(text) as { entitlements: Obj[] };
  expect([...checkResponse.Errors(body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  return { text, entries: body.entitlements };
}

beforeAll(() => {
  alpha = new PlatformServer(SECRET);
});
afterAll(async () => {
  await alpha.stop();
});
beforeEach(() => {
  store = temp.store;
  alpha.calls.length = 0;
  alpha.mode = { kind: 'answer', entitled: () => 'yes' };
  store.applyFilesSync([
    preparedFile(
      [
        { doi: '10.1000/paid-1', accessType: 'paid' },
        { doi: '10.1000/paid-2', accessType: 'paid' },
      ],
      { platform: 'alpha' },
    ),
  ]);
});

describe("a platform's av and licenses", () => {
  test("reach the integrator after vor and before org and uid (GetFTR's order); other members do not", async () => {
    alpha.mode = {
      kind: 'answer',
      entitled: () => 'yes',
      extra: (doi) => ({
        // members in another order than ours: the reply's order is our own
        licenses: LICENSES,
        org: { customerID: 'cust-7' },
        av: AV,
        vor: [{ url: `https://alpha.example/vor/${doi}.pdf` }],
        document: `https://alpha.example/landing/${doi}`,
        accessType: 'paid',
        textMining: { allowed: true },
      }),
    };
    const { app } = appWith();
    const { text, entries } = await ask(app, [{ doi: '10.1000/PAID-1', uid: 'u-1' }]);
    expect(entries).toEqual([
      {
        doi: '10.1000/PAID-1',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'paid',
        source: 'service_request',
        document: 'https://alpha.example/landing/10.1000/PAID-1',
        vor: [{ url: 'https://alpha.example/vor/10.1000/PAID-1.pdf' }],
        av: AV,
        licenses: LICENSES,
        // the customerID is for counter integrators only (counter.test.ts)
        org: ORG,
        uid: 'u-1',
      },
    ]);
    expect(Object.keys(entries[0]!)).toEqual([
      'doi',
      'statusCode',
      'entitled',
      'accessType',
      'source',
      'document',
      'vor',
      'av',
      'licenses',
      'org',
      'uid',
    ]);
    expect(text).not.toContain('textMining');
    expect(text).not.toContain('cust-7');
  });

  test('a malformed item is dropped alone: the others, and the answer, stand', async () => {
    const entry = {
      doi: '10.1000/paid-1',
      entitled: 'yes',
      av: [{ url: 'ftp://alpha.example/a' }, AV[0], 'https://alpha.example/bare', { url: 'https://alpha.example/b' }],
      licenses: [
        { ...LICENSES[0], startDate: '2021-02-30' },
        LICENSES[0],
        { type: 'cc_by', url: 'https://creativecommons.org/licenses/by/4.0/' },
        { ...LICENSES[1], url: 'alpha.example/tdm' },
        LICENSES[1],
      ],
    };
    // a second entry whose av and licenses are no lists: those members go, its answer stands
    const other = { doi: '10.1000/paid-2', entitled: 'no', av: 'https://alpha.example/x', licenses: { type: 'cc_by' } };
    alpha.mode = { kind: 'raw', status: 200, body: JSON.stringify({ entitlements: [entry, other] }) };
    const { app, entitlements } = appWith();
    const { entries } = await ask(app, ['10.1000/paid-1', '10.1000/paid-2']);
    expect(entries).toEqual([
      {
        doi: '10.1000/paid-1',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'paid',
        source: 'service_request',
        av: [AV[0], { url: 'https://alpha.example/b' }],
        licenses: LICENSES,
        org: ORG,
      },
      {
        doi: '10.1000/paid-2',
        statusCode: 200,
        entitled: 'no',
        accessType: 'paid',
        source: 'service_request',
        org: ORG,
      },
    ]);
    // a dropped item is no failed call: the breaker and the figures see a good one
    expect(entitlements.clients.get('alpha')!.figures.calls).toMatchObject({ ok: 1, malformed: 0 });
  });

  test('are kept in the answer cache with the answer, and their bytes counted against cacheMaxBytes', async () => {
    alpha.mode = {
      kind: 'answer',
      entitled: () => 'yes',
      extra: (doi) => (doi === '10.1000/paid-1' ? { av: AV, licenses: LICENSES } : {}),
    };
    const { app, entitlements } = appWith(60);
    const cache = entitlements.forStore(store).cache;
    const live = (await ask(app, ['10.1000/paid-1'])).entries[0]!;
    const withMembers = cache.bytes;
    expect(live).toMatchObject({ source: 'service_request', av: AV, licenses: LICENSES });
    expect((await ask(app, ['10.1000/paid-1'])).entries[0]).toEqual({ ...live, source: 'service_cache' });
    expect(alpha.calls).toHaveLength(1);
    // the same answer without them, for a DOI of the same length: the difference is theirs, as counted
    await ask(app, ['10.1000/paid-2']);
    const without = cache.bytes - withMembers;
    const chars = (o: object) => Object.values(o).join('').length;
    const theirs = [...AV, ...LICENSES].reduce((n, item) => n + 64 + 2 * chars(item), 0);
    expect(withMembers - without).toBe(theirs);
  });
});
