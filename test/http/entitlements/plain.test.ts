import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DEFAULT_ENTITLEMENTS } from '../../../src/config/index.ts';
import { MAX_DOIS_PER_REQUEST, plainDoiHash } from '../../../src/doi/index.ts';
import { Entitlements } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { scanEntitlementBody } from '../../../src/http/wire/plain-body.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded, tempDir } from '../../support/fixtures.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import {
  entitlementsWithoutApi,
  INTEGRATORS,
  importSample,
  KEY,
  KEY_NO_UPDATES,
  makeApp,
  post,
} from '../http-support.ts';

/**
 * The Entitlement API reads a body in the plain shape from its bytes (scanEntitlementBody) and parses any other
 * body in full. These tests hold the two readings to one meaning: the scanner recognises a body only when
 * JSON.parse would read it as the same org and DOI strings, and both paths write the same reply, byte for byte.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function scan(body: string): { dois: string[]; org: unknown } | undefined {
  const bytes = encoder.encode(body);
  const spans = new Int32Array(2 * MAX_DOIS_PER_REQUEST);
  const org = new Int32Array(2);
  const hashes = new Int32Array(MAX_DOIS_PER_REQUEST);
  const n = scanEntitlementBody(bytes, spans, MAX_DOIS_PER_REQUEST, org, hashes);
  if (n < 0) return undefined;
  for (let i = 0; i < n; i++) expect(hashes[i]).toBe(plainDoiHash(bytes, spans[2 * i]!, spans[2 * i + 1]!));
  return {
    dois: Array.from({ length: n }, (_, i) => decoder.decode(bytes.subarray(spans[2 * i], spans[2 * i + 1]))),
    org: org[0]! < 0 ? undefined : JSON.parse(decoder.decode(bytes.subarray(org[0], org[1]))),
  };
}

describe('scanEntitlementBody recognises the plain shape, and only what JSON.parse reads the same way', () => {
  const accepted: [string, string[], unknown][] = [
    ['{"dois":["10.1234/a"]}', ['10.1234/a'], undefined],
    [
      '{"org":{"ipv4":"192.0.2.1"},"dois":["10.1234/a","doi:10.1/x"]}',
      ['10.1234/a', 'doi:10.1/x'],
      { ipv4: '192.0.2.1' },
    ],
    [
      ' { "dois" : [ "10.1234/a" ] , "org" : { "entityID" : "https://i.example/{x}\\"]" , "n": [1, {"a": []}] } } ',
      ['10.1234/a'],
      { entityID: 'https://i.example/{x}"]', n: [1, { a: [] }] },
    ],
    ['{"org":{},"dois":["not a doi"]}', ['not a doi'], {}],
    // plain DOIs in any case, and strings that are not (a space, a short registrant, no suffix): their hashes too
    [
      '{"dois":["10.1234/AbC","10.1234/a b","10.123/x","10.1234/","10.123456789/~!{}"]}',
      ['10.1234/AbC', '10.1234/a b', '10.123/x', '10.1234/', '10.123456789/~!{}'],
      undefined,
    ],
  ];
  for (const [body, dois, org] of accepted)
    test(`accepts ${body}`, () => {
      expect(scan(body)).toEqual({ dois, org });
      expect(JSON.parse(body)).toEqual(org === undefined ? { dois } : { org, dois });
    });

  const declined = [
    '{"dois":[]}',
    '{"org":{"ipv4":"1.2.3.4"}}',
    '{"dois":["10.1234/a"],"dois":["10.1234/b"]}',
    '{"org":{},"org":{},"dois":["10.1234/a"]}',
    '{"dois":["10.1234/a"],}',
    '{"dois":["10.1234/a"],"extra":1}',
    '{"\\u0064ois":["10.1234/a"]}',
    '{"dois":[{"doi":"10.1234/a"}]}',
    '{"dois":["10.1234/\\u0061"]}',
    '{"dois":["10.1234/é"]}',
    '{"org":[],"dois":["10.1234/a"]}',
    '{"org":{"a":"unterminated},"dois":["10.1234/a"]}',
    '{"org":{"a":[}],"dois":["10.1234/a"]}',
    '{"dois":["10.1234/a"]} x',
    JSON.stringify({ dois: Array.from({ length: 101 }, (_, i) => `10.1234/${i}`) }),
  ];
  for (const body of declined) test(`declines ${body.slice(0, 60)}`, () => expect(scan(body)).toBeUndefined());
});

describe('both paths write the same reply, byte for byte', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  let app: App;
  let withUpdates: string[];

  beforeAll(async () => {
    dir = tempDir();
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    const sample = await importSample([store]);
    withUpdates = [...sample.works.values()].slice(0, 30).map((w) => w.doi);
    const rand = seeded(5);
    const access = ['open', 'free', 'permFree', 'paid', undefined];
    store.applyFilesSync([
      preparedFile(
        [...withUpdates, ...Array.from({ length: 200 }, (_, i) => `10.7777/Doc.${i}`)].map((doi) => {
          const a = access[Math.floor(rand() * access.length)];
          return {
            doi,
            ...(a ? { accessType: a } : {}),
            ...(rand() < 0.7 ? { vor: [{ url: `https://h.example/${doi}.pdf`, contentType: 'application/pdf' }] } : {}),
          };
        }),
        { platform: 'acme' },
      ),
    ]);
    // no platform has an Entitlement API: paid DOIs answer at once, publisher_not_supported
    app = makeApp({ production: { store } }, { entitlements: entitlementsWithoutApi() });
  });
  afterAll(async () => {
    await store.close();
    dir.remove();
  });

  /** A body of random entries (plain DOIs, other forms, not DOIs, unknown ones) as the scanner takes it, and the same body it does not. */
  function randomBodies(rand: () => number): { plain: string; general: string } {
    const pick = () => {
      const r = rand();
      if (r < 0.3) return `10.7777/Doc.${Math.floor(rand() * 260)}`;
      if (r < 0.45) return `10.7777/doc.${Math.floor(rand() * 200)}`.toUpperCase();
      if (r < 0.6) return withUpdates[Math.floor(rand() * withUpdates.length)]!;
      if (r < 0.7) return `https://doi.org/10.7777/Doc.${Math.floor(rand() * 200)}`;
      if (r < 0.8) return `doi:10.7777/Doc.${Math.floor(rand() * 200)}`;
      if (r < 0.9) return ['not a doi', '10.12/x', '10.7777/', ''][Math.floor(rand() * 4)]!;
      return `10.5555/unknown.${Math.floor(rand() * 9)}`;
    };
    const dois = Array.from({ length: 1 + Math.floor(rand() * 100) }, pick);
    const org = rand() < 0.5 ? { ipv4: '192.0.2.7' } : rand() < 0.5 ? {} : undefined;
    const plain = JSON.stringify(org === undefined ? { dois } : rand() < 0.5 ? { org, dois } : { dois, org });
    const general = plain.replace('"dois"', '"\\u0064ois"');
    expect(scan(general)).toBeUndefined();
    return { plain, general };
  }

  test('random bodies, read plain and forced onto the general path, answer alike for both integrators', async () => {
    const rand = seeded(11);
    let plainSeen = 0;
    for (let round = 0; round < 60; round++) {
      const { plain, general } = randomBodies(rand);
      if (scan(plain)) plainSeen++;
      for (const key of [KEY, KEY_NO_UPDATES]) {
        const a = await post(app, '/v2.2/entitlements', plain, { key });
        const b = await post(app, '/v2.2/entitlements', general, { key });
        expect(a.status).toBe(200);
        expect(await a.text()).toBe(await b.text());
      }
    }
    expect(plainSeen).toBeGreaterThan(50);
  });

  test('with a platform that has an Entitlement API: a counter integrator (its open DOIs asked, the customerID shown) and the others answer alike on both paths', async () => {
    const secret = 'a-shared-secret-of-acme-0123456789';
    const platform = new PlatformServer(secret);
    // the answer depends on the DOI alone, so that both readings of a body get the same
    platform.mode = {
      kind: 'answer',
      entitled: (doi) => (doi.length % 2 === 0 ? 'yes' : 'no'),
      extra: (doi) => ({
        av: [{ url: `https://acme.example/av/${doi}` }],
        licenses: [{ type: 'cc_by', url: 'https://creativecommons.org/licenses/by/4.0/', startDate: '2021-03-01' }],
        org: { customerID: `customer "${doi.length}"` },
      }),
    };
    const counterKey = 'key-of-a-counter-0003';
    const withApi = makeApp(
      { production: { store } },
      {
        entitlements: new Entitlements(
          [
            {
              name: 'acme',
              entitlementUrl: platform.url,
              entitlementSecret: secret,
              // far past any loopback answer: a time-out on one path only would be no difference of the paths
              entitlementTimeoutMs: 30_000,
              entitlementConcurrency: 8,
              entitlementBatch: 20,
              entitlementCacheSeconds: 0,
            },
          ],
          DEFAULT_ENTITLEMENTS,
        ),
        integrators: [
          ...INTEGRATORS,
          { name: 'usage-reports', apiKey: counterKey, updates: false, cache: true, counter: true },
        ],
      },
    );
    try {
      const rand = seeded(23);
      let openAsked = 0;
      for (let round = 0; round < 20; round++) {
        const { plain, general } = randomBodies(rand);
        for (const key of [KEY_NO_UPDATES, counterKey]) {
          const a = await post(withApi, '/v2.2/entitlements', plain, { key });
          const b = await post(withApi, '/v2.2/entitlements', general, { key });
          expect(a.status).toBe(200);
          const text = await a.text();
          expect(text).toBe(await b.text());
          if (key === counterKey) openAsked += text.split('"accessType":"open","source":"service_request"').length - 1;
          else expect(text).not.toContain('customerID');
        }
      }
      expect(openAsked).toBeGreaterThan(20);
    } finally {
      await platform.stop();
    }
  });

  test('an org slice the schema refuses takes the general path and gets its error', async () => {
    for (const body of [
      '{"org":{"ip":"1"},"dois":["10.7777/Doc.1"]}',
      '{"org":{"ipv4":"999.1.1.1"},"dois":["10.7777/Doc.1"]}',
    ]) {
      const r = await post(app, '/v2.2/entitlements', body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { message: string }).message).toMatch(/^\/org\/ipv?4?/);
    }
  });
});
