import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DEFAULT_ENTITLEMENTS, type IntegratorSettings, type PlatformSettings } from '../../../src/config/index.ts';
import { Entitlements, EntitlementsResponse } from '../../../src/entitlement/index.ts';
import { type App, startServer } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { PlatformServer, refusedUrl, resettingServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { errorOf, importSample, KEY, KEY_NO_UPDATES, makeApp, platformSettings, post } from '../http-support.ts';

const SECRET = 'a-shared-secret-of-the-platform-0123456789';
const ORG = { ipv4: '192.0.2.10' };

type Obj = Record<string, unknown> & { doi?: string; statusCode: number };
const checkResponse = TypeCompiler.Compile(EntitlementsResponse);

let dir: ReturnType<typeof tempDir>;
let store: Store;
let staging: Store;
let platform: PlatformServer;
let second: PlatformServer;
let clock: number;

const settings = platformSettings;

/** The platforms: `paid` and `second` have Entitlement APIs (the loopback servers), the others none. */
function platforms(over: Record<string, Partial<PlatformSettings>> = {}): PlatformSettings[] {
  return [
    settings('oa'),
    settings('paid', { entitlementUrl: platform.url, entitlementSecret: SECRET, ...over.paid }),
    settings('second', { entitlementUrl: second.url, entitlementSecret: SECRET, ...over.second }),
    settings('legacy'),
  ];
}

function appWith(
  list: PlatformSettings[],
  entitlementSettings = DEFAULT_ENTITLEMENTS,
  integrators?: IntegratorSettings[],
): { app: App; entitlements: Entitlements } {
  const entitlements = new Entitlements(list, entitlementSettings, () => clock);
  const app = makeApp(
    { production: { store }, staging: { store: staging } },
    { entitlements, ...(integrators ? { integrators } : {}) },
  );
  return { app, entitlements };
}

async function ask(
  app: App,
  dois: unknown[],
  opts: { org?: object; key?: string; path?: string } = {},
): Promise<Obj[]> {
  const r = await post(
    app,
    opts.path ?? '/v2.2/entitlements',
    JSON.stringify({ ...(opts.org === undefined ? { org: ORG } : { org: opts.org }), dois }),
    { key: opts.key ?? KEY },
  );
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = JSON.parse(text) as { entitlements: Obj[] };
  expect(Object.keys(body)).toEqual(['entitlements']);
  expect([...checkResponse.Errors(body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]); // every reply fits the published schema
  return body.entitlements;
}

beforeAll(() => {
  platform = new PlatformServer(SECRET);
  second = new PlatformServer(SECRET);
});
afterAll(async () => {
  await platform.stop();
  await second.stop();
});

beforeEach(() => {
  clock = 1_800_000_000_000;
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  platform.calls.length = 0;
  second.calls.length = 0;
  platform.mode = { kind: 'answer', entitled: () => 'yes' };
  second.mode = { kind: 'answer', entitled: () => 'yes' };
  store.applyFilesSync([
    preparedFile(
      [
        {
          doi: '10.1000/Open-1',
          accessType: 'open',
          vor: [{ url: 'https://oa.example/open-1.pdf', contentType: 'application/pdf' }],
        },
        { doi: '10.1000/free-1', accessType: 'free' },
        {
          doi: '10.1000/permfree-1',
          accessType: 'permFree',
          vor: [{ url: 'https://oa.example/pf"1' }, { url: 'https://oa.example/pf1.html', contentType: 'text/html' }],
        },
        { doi: '10.1000/both', accessType: 'open', vor: [{ url: 'https://oa.example/both.pdf' }] },
      ],
      { platform: 'oa' },
    ),
    preparedFile(
      [
        { doi: '10.2000/paid-1', accessType: 'paid', vor: [{ url: 'https://paid.example/paid-1.pdf' }] },
        { doi: '10.2000/untyped-1' },
        { doi: '10.1000/both', accessType: 'paid' },
        { doi: '10.3000/shared', accessType: 'paid' },
        ...Array.from({ length: 45 }, (_, i) => ({ doi: `10.2000/many-${i}`, accessType: 'paid' })),
      ],
      { platform: 'paid' },
    ),
    preparedFile([{ doi: '10.3000/shared', accessType: 'paid' }], { platform: 'second' }),
    preparedFile(
      [
        { doi: '10.4000/legacy-1', accessType: 'paid' },
        { doi: '10.3000/shared', accessType: 'paid' },
      ],
      { platform: 'legacy' },
    ),
  ]);
  staging.applyFilesSync([preparedFile([{ doi: '10.9000/trial', accessType: 'open' }], { platform: 'oa' })]);
});
afterEach(async () => {
  await store.close();
  await staging.close();
  dir.remove();
});

describe('answered from the deposit', () => {
  test('open, free and permFree holdings: entitled yes, oa_platform, the deposited vor links; the platform is never called', async () => {
    const { app } = appWith(platforms());
    const got = await ask(
      app,
      ['10.1000/Open-1', '10.1000/FREE-1', 'https://doi.org/10.1000/permfree-1', 'doi:10.1000/both'],
      { key: KEY_NO_UPDATES },
    );
    expect(got).toEqual([
      {
        doi: '10.1000/Open-1',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'open',
        source: 'oa_platform',
        vor: [{ url: 'https://oa.example/open-1.pdf', contentType: 'application/pdf' }],
      },
      { doi: '10.1000/FREE-1', statusCode: 200, entitled: 'yes', accessType: 'free', source: 'oa_platform' },
      {
        doi: 'https://doi.org/10.1000/permfree-1',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'permFree',
        source: 'oa_platform',
        vor: [{ url: 'https://oa.example/pf"1' }, { url: 'https://oa.example/pf1.html', contentType: 'text/html' }],
      },
      // held open by "oa" and paid by "paid": the open holding answers, no call
      {
        doi: 'doi:10.1000/both',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'open',
        source: 'oa_platform',
        vor: [{ url: 'https://oa.example/both.pdf' }],
      },
    ]);
    expect(platform.calls).toHaveLength(0);
    expect(second.calls).toHaveLength(0);
  });

  test('a DOI no platform holds is a 404 entry, an entry that is not a DOI a 400 entry with why; both in request order', async () => {
    const { app } = appWith(platforms());
    const got = await ask(
      app,
      ['10.5555/nobody', 'not a doi', '10.1000/open-1', { doi: '10.1000/x\u200by', uid: 'u-7' }],
      { key: KEY_NO_UPDATES },
    );
    expect(got[0]).toEqual({ doi: '10.5555/nobody', statusCode: 404 });
    expect(got[1]).toEqual({ doi: 'not a doi', statusCode: 400, message: expect.stringContaining('not a DOI') });
    expect(got[2]!.source).toBe('oa_platform');
    expect(got[3]).toEqual({
      doi: '10.1000/x\u200by',
      statusCode: 400,
      message: expect.stringContaining('U+200B'),
      uid: 'u-7',
    });
  });

  test("an entry by metadata only (GetFTR's title, journal...) is a 400 entry saying DOIs only; the others are answered", async () => {
    const { app } = appWith(platforms());
    const got = await ask(
      app,
      [{ title: 'A title', journal: 'J', authors: ['A'], year: 2020, uid: 'm1' }, '10.1000/free-1'],
      { key: KEY },
    );
    expect(got[0]).toEqual({
      statusCode: 400,
      message: expect.stringContaining('by DOI only'),
      uid: 'm1',
      updates: [],
    });
    expect(got[1]!.source).toBe('oa_platform');
  });

  test('an object entry echoes its uid; the doi is echoed exactly as sent', async () => {
    const { app } = appWith(platforms());
    const got = await ask(app, [{ doi: 'DOI:10.1000/OPEN-1', uid: 'ref "1" é' }, { doi: '10.1000/free-1' }], {
      key: KEY_NO_UPDATES,
    });
    expect(got.map((o) => [o.doi, o.uid, o.source])).toEqual([
      ['DOI:10.1000/OPEN-1', 'ref "1" é', 'oa_platform'],
      ['10.1000/free-1', undefined, 'oa_platform'],
    ]);
  });

  test('updates ride on every answer for an integrator with the feature, never for one without', async () => {
    const sample = await importSample([store]);
    const [key, work] = [...sample.works].find(([, w]) => w.updates.length > 1)!;
    store.applyFilesSync([preparedFile([{ doi: work.doi, accessType: 'open' }], { platform: 'oa' })]);
    const { app } = appWith(platforms());
    const served = (await (await post(app, '/v2.2/updates', JSON.stringify({ dois: [key] }))).json()) as {
      documents: { updates: unknown[] }[];
    };
    const on = await ask(app, [work.doi.toUpperCase(), '10.1000/free-1', '10.5555/nobody', 'nope']);
    expect(on[0]!.source).toBe('oa_platform');
    expect(on[0]!.updates).toEqual(served.documents[0]!.updates);
    expect((on[0]!.updates as unknown[]).length).toBeGreaterThan(1);
    expect(on.slice(1).map((o) => o.updates)).toEqual([[], [], []]);
    const off = await ask(app, [work.doi, '10.1000/free-1', '10.5555/nobody'], { key: KEY_NO_UPDATES });
    expect(off.every((o) => !('updates' in o))).toBe(true);
  });
});

describe('asking the platform', () => {
  test('a paid DOI: the platform is called with the JWT and headers GetFTR sends, and its answer is passed on', async () => {
    platform.mode = {
      kind: 'answer',
      entitled: () => 'yes',
      extra: (doi) => ({
        document: `https://paid.example/landing/${doi}`,
        vor: [{ url: `https://paid.example/${doi}.pdf`, contentType: 'application/pdf' }],
        licenses: ['ignored'],
      }),
    };
    const { app } = appWith(platforms(), { ...DEFAULT_ENTITLEMENTS, name: 'holdings.example' });
    const got = await ask(app, ['10.2000/PAID-1'], {
      org: { ipv4: '192.0.2.10', entityID: 'https://idp.example/saml', ringgoldID: '1234' },
      key: KEY_NO_UPDATES,
    });
    expect(got).toEqual([
      {
        doi: '10.2000/PAID-1',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'paid',
        source: 'service_request',
        document: 'https://paid.example/landing/10.2000/PAID-1',
        vor: [{ url: 'https://paid.example/10.2000/PAID-1.pdf', contentType: 'application/pdf' }],
        org: { ipv4: '192.0.2.10', entityID: 'https://idp.example/saml' },
      },
    ]);
    expect(platform.calls).toHaveLength(1);
    const call = platform.calls[0]!;
    expect(call.body).toEqual({
      org: { ipv4: '192.0.2.10', entityID: 'https://idp.example/saml' },
      dois: ['10.2000/PAID-1'],
    });
    expect(call.jwtHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(call.claims).toEqual({
      iss: 'holdings.example',
      aud: 'paid',
      sub: 'without-updates',
      iat: Math.floor(clock / 1000),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      doi: '10.2000/PAID-1',
    });
    expect(call.headers['user-agent']).toBe('holdings.example Entitlement API');
    expect(call.headers['x-integrator-id']).toBe('without-updates');
    expect(call.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(call.headers['content-type']).toBe('application/json');
  });

  test("a platform built for GetFTR's calls gets them: the iss and user-agent it expects, from [entitlements] name and userAgent", async () => {
    platform.mode = { kind: 'answer', entitled: () => 'no' };
    const { app } = appWith(platforms(), {
      ...DEFAULT_ENTITLEMENTS,
      name: 'getftr',
      userAgent: 'GetFT Entitlement API',
    });
    expect(await ask(app, ['10.2000/PAID-1'], { key: KEY_NO_UPDATES })).toMatchObject([
      { entitled: 'no', source: 'service_request' },
    ]);
    const call = platform.calls[0]!;
    expect([call.claims?.iss, call.headers['user-agent']]).toEqual(['getftr', 'GetFT Entitlement API']);
  });

  test('a holding without access type is decided by its platform like a paid one; the platform may say no', async () => {
    platform.mode = { kind: 'answer', entitled: () => 'no' };
    const { app } = appWith(platforms());
    const got = await ask(app, ['10.2000/untyped-1'], { key: KEY_NO_UPDATES });
    expect(got).toEqual([
      { doi: '10.2000/untyped-1', statusCode: 200, entitled: 'no', source: 'service_request', org: ORG },
    ]);
  });

  test('a platform without an Entitlement API: maybe, publisher_not_supported, nothing called', async () => {
    const { app } = appWith(platforms());
    expect(await ask(app, ['10.4000/legacy-1'], { key: KEY_NO_UPDATES })).toEqual([
      {
        doi: '10.4000/legacy-1',
        statusCode: 200,
        entitled: 'maybe',
        accessType: 'paid',
        source: 'publisher_not_supported',
      },
    ]);
    expect(platform.calls.length + second.calls.length).toBe(0);
  });

  test('the DOIs of one request go to their platform in batches of entitlementBatch, with unique JWT ids and request ids', async () => {
    platform.mode = { kind: 'answer', entitled: (doi) => (doi.endsWith('7') ? 'no' : 'yes') };
    const { app } = appWith(platforms());
    const dois = Array.from({ length: 45 }, (_, i) => `10.2000/many-${i}`);
    const got = await ask(app, dois, { key: KEY_NO_UPDATES });
    expect(got.map((o) => o.doi)).toEqual(dois);
    expect(got.map((o) => o.entitled)).toEqual(dois.map((d) => (d.endsWith('7') ? 'no' : 'yes')));
    expect(platform.calls.map((c) => c.body.dois.length).sort()).toEqual([20, 20, 5].sort());
    expect(platform.calls.flatMap((c) => c.body.dois).sort()).toEqual([...dois].sort());
    expect(new Set(platform.calls.map((c) => c.claims!.jti)).size).toBe(3);
    expect(new Set(platform.calls.map((c) => c.headers['x-request-id'])).size).toBe(3);
    expect(platform.calls.map((c) => c.claims!.doi)).toEqual(platform.calls.map((c) => c.body.dois[0]));
  });

  test('a DOI named by several entries (in any form) is asked once; every entry gets the answer', async () => {
    const { app } = appWith(platforms());
    const got = await ask(
      app,
      ['10.2000/paid-1', 'doi:10.2000/PAID-1', { doi: 'https://doi.org/10.2000/paid-1', uid: 'x' }],
      { key: KEY_NO_UPDATES },
    );
    expect(got.map((o) => [o.doi, o.entitled, o.source, o.uid])).toEqual([
      ['10.2000/paid-1', 'yes', 'service_request', undefined],
      ['doi:10.2000/PAID-1', 'yes', 'service_request', undefined],
      ['https://doi.org/10.2000/paid-1', 'yes', 'service_request', 'x'],
    ]);
    expect(platform.calls.map((c) => c.body.dois)).toEqual([['10.2000/paid-1']]);
  });

  test('a doi.org link is percent-decoded: it finds the holding, the platform gets the bare DOI; a broken encoding is a 400 entry', async () => {
    const { app } = appWith(platforms());
    const got = await ask(
      app,
      [
        'https://doi.org/10.2000%2Fpaid-1',
        'https://doi.org/10.1000%2Fopen-1',
        'https://doi.org/10.1000/open%2',
        '10.1000/open%2D1',
      ],
      { key: KEY_NO_UPDATES },
    );
    expect(got.map((o) => [o.doi, o.statusCode, o.source])).toEqual([
      ['https://doi.org/10.2000%2Fpaid-1', 200, 'service_request'],
      ['https://doi.org/10.1000%2Fopen-1', 200, 'oa_platform'],
      ['https://doi.org/10.1000/open%2', 400, undefined],
      ['10.1000/open%2D1', 404, undefined], // the bare form is taken as it is
    ]);
    expect(got[2]!.message).toMatch(/malformed percent-encoding at index 12 of its DOI/);
    expect(platform.calls.map((c) => c.body.dois)).toEqual([['10.2000/paid-1']]);
  });

  test('several paid platforms are asked in parallel: the first yes wins, all no gives no, otherwise the first that is not no', async () => {
    const { app } = appWith(platforms());
    platform.mode = { kind: 'answer', entitled: () => 'no', delayMs: 30 };
    second.mode = { kind: 'answer', entitled: () => 'yes' };
    expect((await ask(app, ['10.3000/shared'], { key: KEY_NO_UPDATES }))[0]).toMatchObject({
      statusCode: 200,
      entitled: 'yes',
      source: 'service_request',
    });
    second.mode = { kind: 'answer', entitled: () => 'no' };
    // "legacy" has no API: not all platforms said no, so its maybe stands
    expect((await ask(app, ['10.3000/shared'], { key: KEY_NO_UPDATES }))[0]).toMatchObject({
      entitled: 'maybe',
      source: 'publisher_not_supported',
    });
    const { app: twoOnly } = appWith(
      platforms()
        .filter((p) => p.name !== 'legacy')
        .concat(settings('legacy', { entitlementUrl: second.url, entitlementSecret: SECRET })),
    );
    expect((await ask(twoOnly, ['10.3000/shared'], { key: KEY_NO_UPDATES }))[0]).toMatchObject({
      statusCode: 200,
      entitled: 'no',
      source: 'service_request',
    });
  });

  test('the first yes answers without waiting for a slower platform', async () => {
    // the slower one never answers, and is given 30 s: waiting for it could not end sooner
    platform.mode = { kind: 'hang' };
    second.mode = { kind: 'answer', entitled: () => 'yes' };
    const { app } = appWith(platforms({ paid: { entitlementTimeoutMs: 30_000 } }));
    const t0 = performance.now();
    const [got] = await ask(app, ['10.3000/shared'], { key: KEY_NO_UPDATES });
    expect(got).toMatchObject({ entitled: 'yes', source: 'service_request' });
    expect(platform.calls).toHaveLength(1); // it was asked, and is still not answering
    expect(performance.now() - t0).toBeLessThan(15_000);
  });
});

describe('a bad platform', () => {
  const failing: [string, () => Promise<{ url: string; stop?: () => Promise<void> } | void>][] = [
    ['answers 500', async () => void (platform.mode = { kind: 'raw', status: 500, body: '{"error":"boom"}' })],
    ['answers garbage', async () => void (platform.mode = { kind: 'raw', status: 200, body: '<html>not json' })],
    [
      'answers JSON of another shape',
      async () => void (platform.mode = { kind: 'raw', status: 200, body: '{"entitlements":{"doi":"x"}}' }),
    ],
    [
      'answers an entry with a bad entitled value',
      async () =>
        void (platform.mode = {
          kind: 'raw',
          status: 200,
          body: '{"entitlements":[{"doi":"10.2000/paid-1","entitled":"sure"}]}',
        }),
    ],
    [
      'leaves the DOI out of its answer',
      async () =>
        void (platform.mode = {
          kind: 'raw',
          status: 200,
          body: '{"entitlements":[{"doi":"10.2000/other","entitled":"yes"}]}',
        }),
    ],
    ['refuses the connection', async () => ({ url: await refusedUrl() })],
    ['resets the connection', async () => resettingServer()],
  ];
  for (const [name, arrange] of failing)
    test(`a platform that ${name}: entitled maybe, source unknown`, async () => {
      const other = await arrange();
      const { app, entitlements } = appWith(platforms(other ? { paid: { entitlementUrl: other.url } } : {}));
      expect(await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES })).toEqual([
        { doi: '10.2000/paid-1', statusCode: 200, entitled: 'maybe', accessType: 'paid', source: 'unknown' },
      ]);
      const calls = entitlements.clients.get('paid')!.figures.calls;
      expect(calls.ok + calls.error + calls.malformed).toBe(1);
      await other?.stop?.();
    });

  test('a platform slower than its time-out: per-document 504, maybe; the request answers at the time-out, not with the late answer', async () => {
    // the answer comes after 20 s: a request that waited for it takes that long
    platform.mode = { kind: 'answer', entitled: () => 'yes', delayMs: 20_000 };
    const { app, entitlements } = appWith(platforms({ paid: { entitlementTimeoutMs: 300 } }));
    const t0 = performance.now();
    const got = await ask(app, ['10.2000/paid-1', '10.1000/open-1'], { key: KEY_NO_UPDATES });
    const took = performance.now() - t0;
    expect(got[0]).toEqual({
      doi: '10.2000/paid-1',
      statusCode: 504,
      entitled: 'maybe',
      accessType: 'paid',
      source: 'unknown',
    });
    expect(got[1]!.source).toBe('oa_platform');
    expect(took).toBeGreaterThanOrEqual(290); // the time-out was waited for (a timer never fires early)
    expect(took).toBeLessThan(10_000);
    expect(entitlements.clients.get('paid')!.figures.calls.timeout).toBe(1);
  });

  test('a hanging platform: the request still answers, at the time-out', async () => {
    platform.mode = { kind: 'hang' };
    const { app, entitlements } = appWith(platforms({ paid: { entitlementTimeoutMs: 200 } }));
    const t0 = performance.now();
    const got = await ask(app, ['10.2000/paid-1', '10.2000/many-1'], { key: KEY_NO_UPDATES });
    const took = performance.now() - t0;
    expect(got.map((o) => o.statusCode)).toEqual([504, 504]);
    expect(entitlements.clients.get('paid')!.figures.calls.timeout).toBe(1);
    expect(took).toBeGreaterThanOrEqual(190);
    // well under the 30 s after which the platform's own server drops the idle connection
    expect(took).toBeLessThan(10_000);
  });

  test('the circuit breaker opens after N consecutive failures, answers at once as for a time-out, then lets one call test recovery', async () => {
    platform.mode = { kind: 'raw', status: 503, body: 'down' };
    const { app, entitlements } = appWith(platforms(), {
      ...DEFAULT_ENTITLEMENTS,
      breakerFailures: 3,
      breakerCooldownMs: 10_000,
    });
    const client = entitlements.clients.get('paid')!;
    for (let i = 0; i < 3; i++)
      expect((await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES }))[0]!.source).toBe('unknown');
    expect(client.breaker.state).toBe('open');
    expect(platform.calls).toHaveLength(3);
    platform.mode = { kind: 'answer', entitled: () => 'yes' };
    const [blocked] = await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES });
    expect(blocked).toEqual({
      doi: '10.2000/paid-1',
      statusCode: 504,
      entitled: 'maybe',
      accessType: 'paid',
      source: 'unknown',
    });
    expect(platform.calls).toHaveLength(3); // not called while open
    expect(client.figures.calls.breaker_open).toBe(1);
    // other platforms are not affected
    second.mode = { kind: 'answer', entitled: () => 'yes' };
    clock += 10_000; // the cool-down has passed: one call goes through and closes the breaker
    expect(client.breaker.state).toBe('half-open');
    expect((await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES }))[0]).toMatchObject({
      statusCode: 200,
      entitled: 'yes',
      source: 'service_request',
    });
    expect(client.breaker.state).toBe('closed');
    expect(platform.calls).toHaveLength(4);
  });

  test('calls that wait past their time-out for a free slot (our queue, not the platform) are 504 but never open the breaker', async () => {
    platform.mode = { kind: 'answer', entitled: () => 'yes', delayMs: 400 };
    const { app, entitlements } = appWith(
      platforms({ paid: { entitlementConcurrency: 1, entitlementBatch: 1, entitlementTimeoutMs: 250 } }),
      {
        ...DEFAULT_ENTITLEMENTS,
        breakerFailures: 2,
      },
    );
    const got = await ask(app, ['10.2000/many-1', '10.2000/many-2', '10.2000/many-3'], { key: KEY_NO_UPDATES });
    expect(got.map((o) => o.statusCode)).toEqual([504, 504, 504]);
    const client = entitlements.clients.get('paid')!;
    expect([client.figures.calls.timeout, client.figures.calls.no_slot]).toEqual([1, 2]);
    expect(client.breaker.state).toBe('closed');
  });

  test('a failed recovery call opens the breaker for another cool-down', async () => {
    platform.mode = { kind: 'raw', status: 500, body: '' };
    const { app, entitlements } = appWith(platforms(), {
      ...DEFAULT_ENTITLEMENTS,
      breakerFailures: 2,
      breakerCooldownMs: 5_000,
    });
    const client = entitlements.clients.get('paid')!;
    for (let i = 0; i < 2; i++) await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES });
    clock += 5_000;
    await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES });
    expect(client.breaker.state).toBe('open');
    expect(platform.calls).toHaveLength(3);
    await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES });
    expect(platform.calls).toHaveLength(3);
    expect(client.figures.breakerOpens).toBe(2);
  });
});

describe('the answer cache', () => {
  const cached = { paid: { entitlementCacheSeconds: 60 } };

  test('a cached platform answer is served as service_cache; another org, or an integrator with cache = false, gets a live answer', async () => {
    const integrators = [
      { name: 'cached', apiKey: KEY, updates: false, cache: true, counter: false },
      { name: 'uncached', apiKey: KEY_NO_UPDATES, updates: false, cache: false, counter: false },
    ];
    const { app } = appWith(platforms(cached), DEFAULT_ENTITLEMENTS, integrators);
    expect((await ask(app, ['10.2000/paid-1']))[0]!.source).toBe('service_request');
    expect((await ask(app, ['10.2000/PAID-1']))[0]).toEqual({
      doi: '10.2000/PAID-1',
      statusCode: 200,
      entitled: 'yes',
      accessType: 'paid',
      source: 'service_cache',
      org: ORG,
    });
    expect(platform.calls).toHaveLength(1);
    expect((await ask(app, ['10.2000/paid-1'], { org: { ipv4: '198.51.100.1' } }))[0]!.source).toBe('service_request');
    expect((await ask(app, ['10.2000/paid-1'], { key: KEY_NO_UPDATES }))[0]!.source).toBe('service_request');
    expect(platform.calls).toHaveLength(3);
  });

  test('answers expire after entitlementCacheSeconds; maybe and failures are not cached', async () => {
    const { app } = appWith(platforms(cached));
    await ask(app, ['10.2000/paid-1']);
    clock += 59_999;
    expect((await ask(app, ['10.2000/paid-1']))[0]!.source).toBe('service_cache');
    clock += 1;
    expect((await ask(app, ['10.2000/paid-1']))[0]!.source).toBe('service_request');
    platform.mode = { kind: 'answer', entitled: () => 'maybe' };
    await ask(app, ['10.2000/untyped-1']);
    expect((await ask(app, ['10.2000/untyped-1']))[0]!.source).toBe('service_request');
  });

  test('a new deposit for the DOI drops its cached answers', async () => {
    const { app } = appWith(platforms(cached));
    await ask(app, ['10.2000/paid-1', '10.2000/many-1']);
    store.applyFilesSync([preparedFile([{ doi: '10.2000/Paid-1', accessType: 'paid' }], { platform: 'paid' })]);
    const got = await ask(app, ['10.2000/paid-1', '10.2000/many-1']);
    expect(got.map((o) => o.source)).toEqual(['service_request', 'service_cache']);
  });

  test('an answer asked for before a deposit of its DOI is not cached when it arrives after it', async () => {
    let answer!: () => void;
    platform.mode = { kind: 'answer', entitled: () => 'yes', until: new Promise<void>((r) => (answer = r)) };
    const { app } = appWith(platforms(cached));
    const inFlight = ask(app, ['10.2000/paid-1', '10.2000/many-1']);
    await waitFor(() => platform.calls.length === 1, 'the call out');
    store.applyFilesSync([preparedFile([{ doi: '10.2000/paid-1', accessType: 'paid' }], { platform: 'paid' })]);
    answer(); // the platform answers after the deposit
    expect((await inFlight).map((o) => o.source)).toEqual(['service_request', 'service_request']);
    const again = await ask(app, ['10.2000/paid-1', '10.2000/many-1']);
    expect(again.map((o) => o.source)).toEqual(['service_request', 'service_cache']);
  });

  test('files applied by another process (a gap the index notices) empty the cache', async () => {
    const { app } = appWith(platforms(cached));
    await ask(app, ['10.2000/paid-1']);
    expect((await ask(app, ['10.2000/paid-1']))[0]!.source).toBe('service_cache');
    const other = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    other.applyFilesSync([preparedFile([{ doi: '10.2000/other-doi', accessType: 'paid' }], { platform: 'paid' })]);
    // the index re-reads the store's apply number at most every 250 ms, as it is asked: until then it answers from the cache
    await waitFor(
      async () => (await ask(app, ['10.2000/paid-1']))[0]!.source === 'service_request',
      'the cache emptied once the index noticed the other process',
    );
    await other.close();
  });

  test('the cache holds at most cacheMaxEntries answers, the least recently used going first', async () => {
    const { app, entitlements } = appWith(platforms(cached), { ...DEFAULT_ENTITLEMENTS, cacheMaxEntries: 2 });
    await ask(app, ['10.2000/many-1']);
    await ask(app, ['10.2000/many-2']);
    await ask(app, ['10.2000/many-1']); // a hit: many-1 is now the most recent
    await ask(app, ['10.2000/many-3']); // many-2 goes
    expect(entitlements.forStore(store).cache.size).toBe(2);
    const got = await ask(app, ['10.2000/many-1', '10.2000/many-2', '10.2000/many-3']);
    expect(got.map((o) => o.source)).toEqual(['service_cache', 'service_request', 'service_cache']);
  });
});

describe('request-level errors, as the Updates API', () => {
  const cases: [string, string, number, string, RegExp][] = [
    ['no DOIs', '{"dois":[]}', 400, 'BAD_REQUEST', /^\/dois: 0 DOIs given/],
    [
      '101 DOIs',
      JSON.stringify({ dois: Array.from({ length: 101 }, (_, i) => `10.1234/${i}`) }),
      400,
      'BAD_REQUEST',
      /^\/dois: 101 DOIs given/,
    ],
    ['a number entry', '{"dois":[5]}', 400, 'BAD_REQUEST', /^\/dois\/0: an entry is a DOI string or/],
    [
      'an object entry with a member GetFTR does not have',
      '{"dois":[{"doi":"10.1/x","colour":"t"}]}',
      400,
      'BAD_REQUEST',
      /^\/dois\/0\/colour: unexpected property; an entry is a DOI string or/,
    ],
    [
      'an over-long uid',
      JSON.stringify({ dois: ['10.1000/open-1', { doi: '10.1000/open-1', uid: 'u'.repeat(257) }] }),
      400,
      'BAD_REQUEST',
      /^\/dois\/1\/uid: at most 256 characters$/,
    ],
    ['a doi that is not a string', '{"dois":[{"doi":5}]}', 400, 'BAD_REQUEST', /^\/dois\/0\/doi: must be a string$/],
    [
      'a uid that is not a string',
      '{"dois":[{"doi":"10.1000/open-1","uid":7}]}',
      400,
      'BAD_REQUEST',
      /^\/dois\/0\/uid: must be a string$/,
    ],
    [
      'an entry neither a string nor an object',
      '{"dois":[true]}',
      400,
      'BAD_REQUEST',
      /^\/dois\/0: an entry is a DOI string or \{"doi": "10.xxxx\/...", "uid"\?: "..."\}$/,
    ],
    [
      'an over-long org field',
      JSON.stringify({ org: { ringgoldID: 'r'.repeat(65) }, dois: ['10.1000/open-1'] }),
      400,
      'BAD_REQUEST',
      /^\/org\/ringgoldID: at most 64 characters$/,
    ],
    [
      'an unknown org member',
      '{"org":{"ip":"1.2.3.4"},"dois":["10.1000/open-1"]}',
      400,
      'BAD_REQUEST',
      /^\/org\/ip: unexpected property/,
    ],
    [
      'an ipv4 that does not parse',
      '{"org":{"ipv4":"300.1.1.1"},"dois":["10.1000/open-1"]}',
      400,
      'BAD_REQUEST',
      /^\/org\/ipv4: "300.1.1.1" is not an IPv4 address/,
    ],
    [
      'an ipv6 that does not parse',
      '{"org":{"ipv6":"2001:db8::zz"},"dois":["10.1000/open-1"]}',
      400,
      'BAD_REQUEST',
      /^\/org\/ipv6: /,
    ],
    // a zone names an interface of the sender, never part of a reader's address: refused on both reading paths
    [
      'an ipv6 with a zone (a plain body)',
      '{"org":{"ipv6":"fe80::1%eth0"},"dois":["10.1000/open-1"]}',
      400,
      'BAD_REQUEST',
      /^\/org\/ipv6: "fe80::1%eth0" is not an IPv6 address$/,
    ],
    [
      'an ipv6 with a zone (a parsed body)',
      '{"org":{"ipv6":"fe80::1%25eth0"},"dois":[{"doi":"10.1000/open-1"}]}',
      400,
      'BAD_REQUEST',
      /^\/org\/ipv6: "fe80::1%25eth0" is not an IPv6 address$/,
    ],
    [
      'openAthensOrgID without entityID',
      '{"org":{"openAthensOrgID":"x"},"dois":["10.1000/open-1"]}',
      400,
      'BAD_REQUEST',
      /^\/org\/openAthensOrgID: given only with \/org\/entityID/,
    ],
    [
      'an over-long entityID',
      JSON.stringify({ org: { entityID: 'x'.repeat(1025) }, dois: ['10.1000/open-1'] }),
      400,
      'BAD_REQUEST',
      /^\/org\/entityID: /,
    ],
    [
      'malformed JSON',
      '{"dois":[',
      400,
      'INVALID_JSON',
      /not valid JSON: at line 1, column 10 \(byte 9\): unexpected end of the body, expected a value$/,
    ],
    [
      'a trailing comma',
      '{"dois":["10.1000/open-1",]}',
      400,
      'INVALID_JSON',
      /not valid JSON: at line 1, column 27 \(byte 26\): unexpected "]" after ","/,
    ],
  ];
  for (const [name, body, status, code, message] of cases)
    test(`${name}: ${status} ${code}`, async () => {
      const { app } = appWith(platforms());
      const e = await errorOf(await post(app, '/v2.2/entitlements', body));
      expect([e.status, e.body.statusCode, e.body.error]).toEqual([status, status, code]);
      expect(e.body.message).toMatch(message);
    });

  test('a body that is not UTF-8, in a DOI or in the org, is INVALID_JSON naming the byte', async () => {
    const { app } = appWith(platforms());
    const enc = new TextEncoder();
    const doi = new Uint8Array([...enc.encode('{"dois":["10.1000/open-1'), 0xff, ...enc.encode('"]}')]);
    const org = new Uint8Array([
      ...enc.encode('{"org":{"entityID":"https://idp.example/'),
      0xc3,
      0x28,
      ...enc.encode('"},"dois":["10.1000/open-1"]}'),
    ]);
    for (const [body, at] of [
      [doi, 'line 1, column 25 (byte 24)'],
      [org, 'line 1, column 41 (byte 40)'],
    ] as const) {
      const e = await errorOf(await post(app, '/v2.2/entitlements', body));
      expect([e.status, e.body.error, e.body.message]).toEqual([
        400,
        'INVALID_JSON',
        expect.stringContaining(`not valid JSON: at ${at}: not UTF-8`),
      ]);
    }
  });

  test('401 before 415 before 413 before 400; 405 for another method; the same on /v2.1 and /staging', async () => {
    const { app } = appWith(platforms(), DEFAULT_ENTITLEMENTS);
    for (const path of [
      '/v2.2/entitlements',
      '/v2.1/entitlements',
      '/staging/v2.2/entitlements',
      '/staging/v2.1/entitlements',
    ]) {
      expect(
        (await errorOf(await post(app, path, 'x'.repeat(70_000), { key: null, contentType: 'text/plain' }))).status,
      ).toBe(401);
      expect((await errorOf(await post(app, path, 'x'.repeat(70_000), { key: 'wrong-key-000' }))).status).toBe(401);
      expect((await errorOf(await post(app, path, 'x'.repeat(70_000), { contentType: 'text/plain' }))).status).toBe(
        415,
      );
      const coded = await errorOf(
        await post(app, path, 'x'.repeat(70_000), { headers: { 'content-encoding': 'gzip' } }),
      );
      expect([coded.status, coded.body.message]).toEqual([415, expect.stringContaining('Content-Encoding "gzip"')]);
      expect((await errorOf(await post(app, path, 'x'.repeat(70_000)))).status).toBe(413);
      expect((await errorOf(await post(app, path, '{"dois":[]}'))).status).toBe(400);
      const r = await post(app, path, null, { method: 'GET' });
      expect([r.status, r.headers.get('allow')]).toEqual([405, 'POST']);
    }
  });

  test('staging answers from the staging store only', async () => {
    const { app } = appWith(platforms());
    expect(
      (
        await ask(app, ['10.9000/trial', '10.1000/open-1'], { path: '/staging/v2.1/entitlements', key: KEY_NO_UPDATES })
      ).map((o) => o.statusCode),
    ).toEqual([200, 404]);
    expect((await ask(app, ['10.9000/trial'], { key: KEY_NO_UPDATES }))[0]!.statusCode).toBe(404);
  });
});

describe('operations', () => {
  test('metrics per platform (calls by outcome, breaker, cache hits, latency histogram) and answers by source', async () => {
    const { app } = appWith(platforms({ paid: { entitlementCacheSeconds: 60 } }));
    await ask(app, ['10.2000/paid-1', '10.1000/open-1', '10.5555/none', 'bad']);
    await ask(app, ['10.2000/paid-1']);
    const text = await (await app.handle(new Request('http://localhost/metrics'))).text();
    expect(text).toContain('doi_holdings_platform_calls_total{platform="paid",outcome="ok"} 1');
    expect(text).toContain('doi_holdings_platform_breaker_open{platform="paid"} 0');
    expect(text).toContain('doi_holdings_platform_cache_hits_total{platform="paid"} 1');
    expect(text).toContain('doi_holdings_platform_call_seconds_bucket{platform="paid",le="+Inf"} 1');
    expect(text).toContain('doi_holdings_platform_call_seconds_count{platform="paid"} 1');
    expect(text).toContain('# TYPE doi_holdings_platform_call_seconds histogram');
    expect(text).toContain('doi_holdings_entitlement_cache_answers{env="production"} 1');
    expect(Number(/doi_holdings_entitlement_cache_bytes\{env="production"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(
      256,
    );
    for (const [source, n] of [
      ['service_request', 1],
      ['service_cache', 1],
      ['oa_platform', 1],
      ['none', 1],
      ['invalid', 1],
    ])
      expect(text).toContain(`doi_holdings_entitlement_answers_total{env="production",source="${source}"} ${n}`);
  });

  test('over a real port: keys, answers and a platform call end to end', async () => {
    const { app } = appWith(platforms());
    const server = startServer(app, '127.0.0.1', 0);
    try {
      const r = await fetch(`${server.url}/v2.1/entitlements`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY_NO_UPDATES },
        body: JSON.stringify({
          org: ORG,
          dois: ['10.1000/open-1', '10.2000/paid-1', { doi: '10.5555/none', uid: 'z' }],
        }),
      });
      expect(r.status).toBe(200);
      const got = ((await r.json()) as { entitlements: Obj[] }).entitlements;
      expect(got.map((o) => [o.statusCode, o.source, o.uid])).toEqual([
        [200, 'oa_platform', undefined],
        [200, 'service_request', undefined],
        [404, undefined, 'z'],
      ]);
      expect(platform.calls).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});
