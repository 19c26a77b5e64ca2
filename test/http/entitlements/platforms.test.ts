import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import {
  DEFAULT_ENTITLEMENTS,
  type EntitlementSettings,
  type PlatformSettings,
  resolveConfig,
} from '../../../src/config/index.ts';
import { AnswerCache } from '../../../src/entitlement/answer-cache.ts';
import { orgIdentity } from '../../../src/entitlement/api/org.ts';
import { Entitlements } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { KEY_NO_UPDATES, makeApp, post } from '../http-support.ts';

/**
 * The Entitlement API with several platforms: an open holding answers whatever its platform's place, one platform's
 * trouble leaves the others' answers alone, what opens a breaker and how fast an open one answers, the org fields
 * platforms are sent and answers are cached by, and the figures /metrics gives of it all. Loopback platform
 * servers (test/support/platform-server.ts) play `alpha` and `beta`; the app is driven through app.handle.
 */

const SECRET = 'a-shared-secret-of-the-platforms-0123456789';
const ORG = { ipv4: '192.0.2.10' };
type Obj = Record<string, unknown> & { doi?: string; statusCode: number; source?: string };

let dir: ReturnType<typeof tempDir>;
let store: Store;
let staging: Store;
let alpha: PlatformServer;
let beta: PlatformServer;
let clock: number;

function platforms(over: Record<string, Partial<PlatformSettings>> = {}): PlatformSettings[] {
  const base = {
    entitlementTimeoutMs: 1000,
    entitlementConcurrency: 8,
    entitlementBatch: 20,
    entitlementCacheSeconds: 0,
  };
  return [
    { name: 'alpha', ...base, entitlementUrl: alpha.url, entitlementSecret: SECRET, ...over.alpha },
    { name: 'beta', ...base, entitlementUrl: beta.url, entitlementSecret: SECRET, ...over.beta },
    { name: 'zeta', ...base },
  ];
}

function appWith(
  list: PlatformSettings[],
  settings: EntitlementSettings = DEFAULT_ENTITLEMENTS,
): { app: App; entitlements: Entitlements } {
  const entitlements = new Entitlements(list, settings, () => clock);
  return { app: makeApp({ production: { store }, staging: { store: staging } }, { entitlements }), entitlements };
}

/** `org` null: a body without one; `path`: another route (staging) */
async function ask(app: App, dois: unknown[], org: object | null = ORG, path = '/v2.2/entitlements'): Promise<Obj[]> {
  const r = await post(app, path, JSON.stringify(org === null ? { dois } : { org, dois }), { key: KEY_NO_UPDATES });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  return (JSON.parse(text) as { entitlements: Obj[] }).entitlements;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await run();
  return { value, ms: performance.now() - t0 };
}

beforeAll(() => {
  alpha = new PlatformServer(SECRET);
  beta = new PlatformServer(SECRET);
});
afterAll(async () => {
  await alpha.stop();
  await beta.stop();
});

beforeEach(() => {
  clock = 1_800_000_000_000;
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  for (const p of [alpha, beta]) {
    p.calls.length = 0;
    p.mode = { kind: 'answer', entitled: () => 'yes' };
  }
  store.applyFilesSync([
    // the index keeps a DOI's holdings in platform-name order: alpha's comes before zeta's
    preparedFile(
      [
        { doi: '10.1000/paid-then-open', accessType: 'paid' },
        { doi: '10.1000/alpha-only', accessType: 'paid' },
        { doi: '10.1000/both-paid', accessType: 'paid' },
      ],
      { platform: 'alpha' },
    ),
    preparedFile(
      [
        { doi: '10.1000/beta-only', accessType: 'paid' },
        { doi: '10.1000/both-paid', accessType: 'paid' },
      ],
      { platform: 'beta' },
    ),
    preparedFile(
      [
        { doi: '10.1000/paid-then-open', accessType: 'open', vor: [{ url: 'https://zeta.example/pto.pdf' }] },
        { doi: '10.1000/open-1', accessType: 'open' },
      ],
      {
        platform: 'zeta',
      },
    ),
  ]);
});
afterEach(async () => {
  await store.close();
  await staging.close();
  dir.remove();
});

describe('several platforms', () => {
  test('an open holding answers even when a paid holding comes before it; its platform is not asked', async () => {
    const { app } = appWith(platforms());
    expect(await ask(app, ['10.1000/paid-then-open'])).toEqual([
      {
        doi: '10.1000/paid-then-open',
        statusCode: 200,
        entitled: 'yes',
        accessType: 'open',
        source: 'oa_platform',
        vor: [{ url: 'https://zeta.example/pto.pdf' }],
      },
    ]);
    expect(alpha.calls).toHaveLength(0);
  });

  test('holdings of a platform no longer in the config answer as absent (a removed platform’s open must not answer for ever), until it is back', async () => {
    const without = (name: string) => platforms().filter((p) => p.name !== name);
    const { app, entitlements } = appWith(without('zeta'));
    const dois = ['10.1000/paid-then-open', '10.1000/open-1', 'doi:10.1000/OPEN-1', '10.1000/alpha-only'];
    // zeta's open holding no longer answers: alpha's paid one decides; a DOI only zeta held is not held
    const answers = await ask(app, dois);
    expect(answers.map((a) => [a.statusCode, a.source])).toEqual([
      [200, 'service_request'],
      [404, undefined],
      [404, undefined],
      [200, 'service_request'],
    ]);
    expect(alpha.calls.flatMap((c) => c.body.dois).sort()).toEqual(['10.1000/alpha-only', '10.1000/paid-then-open']);
    // object entries: a body parsed, not read as bytes
    expect((await ask(app, [{ doi: '10.1000/open-1', uid: 'u1' }])).map((a) => [a.statusCode, a.uid])).toEqual([
      [404, 'u1'],
    ]);
    entitlements.reconfigure(without('alpha'), DEFAULT_ENTITLEMENTS);
    expect((await ask(app, dois)).map((a) => [a.statusCode, a.source])).toEqual([
      [200, 'oa_platform'],
      [200, 'oa_platform'],
      [200, 'oa_platform'],
      [404, undefined],
    ]);
  });

  test('a hanging platform slows neither requests for open DOIs nor requests another platform decides', async () => {
    alpha.mode = { kind: 'hang' };
    const { app } = appWith(platforms({ alpha: { entitlementTimeoutMs: 1500 } }));
    const stuck = timed(() => ask(app, ['10.1000/alpha-only']));
    await Bun.sleep(50); // alpha's call is out, and hangs
    const open = await timed(() => ask(app, ['10.1000/open-1']));
    const other = await timed(() => ask(app, ['10.1000/beta-only']));
    expect(open.value[0]!.source).toBe('oa_platform');
    expect(other.value[0]).toMatchObject({ statusCode: 200, entitled: 'yes', source: 'service_request' });
    // both answered while alpha's request still waits for its 1.5 s time-out
    expect(open.ms + other.ms).toBeLessThan(1000);
    const late = await stuck;
    expect(late.value[0]!.statusCode).toBe(504);
    expect(late.ms).toBeGreaterThanOrEqual(1400);
  });

  test('calls to a platform are kept alive: one after another, they come over one connection', async () => {
    const { app } = appWith(platforms());
    for (let i = 0; i < 5; i++) await ask(app, ['10.1000/alpha-only']);
    expect(alpha.calls).toHaveLength(5);
    expect(alpha.calls.every((c) => c.clientPort !== undefined)).toBe(true);
    expect(new Set(alpha.calls.map((c) => c.clientPort)).size).toBe(1);
  });

  test('one platform says no, the other yes: yes; both no: no', async () => {
    alpha.mode = { kind: 'answer', entitled: () => 'no' };
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/both-paid']))[0]).toMatchObject({ entitled: 'yes', source: 'service_request' });
    beta.mode = { kind: 'answer', entitled: () => 'no' };
    expect((await ask(app, ['10.1000/both-paid']))[0]).toMatchObject({ entitled: 'no', source: 'service_request' });
  });
});

describe('the breaker', () => {
  const twoFailures = { ...DEFAULT_ENTITLEMENTS, breakerFailures: 2, breakerCooldownMs: 60_000 };

  test('time-outs count as failures: two in a row open it', async () => {
    alpha.mode = { kind: 'hang' };
    const { app, entitlements } = appWith(platforms({ alpha: { entitlementTimeoutMs: 150 } }), twoFailures);
    for (let i = 0; i < 2; i++) expect((await ask(app, ['10.1000/alpha-only']))[0]!.statusCode).toBe(504);
    expect(entitlements.clients.get('alpha')!.breaker.state).toBe('open');
  });

  test('malformed answers count as failures: two in a row open it', async () => {
    alpha.mode = { kind: 'raw', status: 200, body: '{"entitlements": "not a list"}' };
    const { app, entitlements } = appWith(platforms(), twoFailures);
    for (let i = 0; i < 2; i++)
      expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({ entitled: 'maybe', source: 'unknown' });
    expect(entitlements.clients.get('alpha')!.breaker.state).toBe('open');
  });

  test('an open breaker answers at once, not after the time-out, and the other platform is still asked', async () => {
    alpha.mode = { kind: 'raw', status: 503, body: 'down' };
    const { app, entitlements } = appWith(platforms({ alpha: { entitlementTimeoutMs: 5000 } }), twoFailures);
    for (let i = 0; i < 2; i++) await ask(app, ['10.1000/alpha-only']);
    expect(entitlements.clients.get('alpha')!.breaker.state).toBe('open');
    alpha.mode = { kind: 'hang' }; // were it called now, the answer would take the 5 s time-out
    const blocked = await timed(() => ask(app, ['10.1000/alpha-only', '10.1000/beta-only']));
    expect(blocked.ms).toBeLessThan(1000);
    expect(blocked.value.map((o) => [o.statusCode, o.source])).toEqual([
      [504, 'unknown'],
      [200, 'service_request'],
    ]);
    expect(alpha.calls).toHaveLength(2);
    expect(beta.calls).toHaveLength(1);
  });
});

describe('the org', () => {
  const full = {
    ipv6: '2001:db8::1',
    entityID: 'https://idp.example/saml',
    openAthensOrgID: 'oa-123',
    eduPersonScopedAffiliation: 'member@uni.example',
  };

  test('every org field a platform decides by is sent to it and shown on the answer; others are not', async () => {
    const { app } = appWith(platforms());
    const [got] = await ask(app, ['10.1000/alpha-only'], { ...full, ringgoldID: '99' });
    expect(got!.org).toEqual(full);
    expect(alpha.calls[0]!.body.org).toEqual(full);
  });

  test('answers are cached by every such field: a change in any one of them is asked again', async () => {
    const { app } = appWith(platforms({ alpha: { entitlementCacheSeconds: 60 } }));
    expect((await ask(app, ['10.1000/alpha-only'], full))[0]!.source).toBe('service_request');
    expect((await ask(app, ['10.1000/alpha-only'], full))[0]!.source).toBe('service_cache');
    for (const [field, value] of [
      ['ipv6', '2001:db8::2'],
      ['entityID', 'https://other-idp.example/saml'],
      ['openAthensOrgID', 'oa-456'],
      ['eduPersonScopedAffiliation', 'staff@uni.example'],
    ])
      expect((await ask(app, ['10.1000/alpha-only'], { ...full, [field]: value }))[0]!.source).toBe('service_request');
    expect(alpha.calls).toHaveLength(5);
  });

  test('orgs whose fields would run together are told apart: a NUL in a field is no field separator', async () => {
    const { app } = appWith(platforms({ alpha: { entitlementCacheSeconds: 60 } }));
    const one = { entityID: 'https://idp.example/saml\u0000oa-1', openAthensOrgID: 'x' };
    const two = { entityID: 'https://idp.example/saml', openAthensOrgID: 'oa-1\u0000x' };
    expect(orgIdentity(one)).not.toBe(orgIdentity(two));
    expect((await ask(app, ['10.1000/alpha-only'], one))[0]!.source).toBe('service_request');
    const [got] = await ask(app, ['10.1000/alpha-only'], two);
    expect([got!.source, got!.org]).toEqual(['service_request', two]);
    expect(alpha.calls.map((c) => c.body.org)).toEqual([one, two]);
  });
});

describe('the cache', () => {
  test("is kept per platform: one platform's cached answer is not another's", () => {
    const cache = new AnswerCache<string>(100, () => clock);
    const org = orgIdentity(ORG);
    cache.set('alpha', '10.1000/both-paid', org, 'alpha says no', 60_000);
    expect(cache.get('alpha', '10.1000/both-paid', org)).toBe('alpha says no');
    expect(cache.get('beta', '10.1000/both-paid', org)).toBeUndefined();
    cache.set('beta', '10.1000/both-paid', org, 'beta says yes', 60_000);
    expect([cache.get('alpha', '10.1000/both-paid', org), cache.get('beta', '10.1000/both-paid', org)]).toEqual([
      'alpha says no',
      'beta says yes',
    ]);
  });

  test("lifetimes are measured on a clock the time of day does not step: an hour's NTP step forward expires nothing", async () => {
    // the service's own clocks (no test clock), with the time of day (Date.now) stepped under them
    const realNow = Date.now;
    let step = 0;
    Date.now = () => realNow() + step;
    try {
      const entitlements = new Entitlements(
        platforms({ alpha: { entitlementCacheSeconds: 60 } }),
        DEFAULT_ENTITLEMENTS,
      );
      const app = makeApp({ production: { store }, staging: { store: staging } }, { entitlements });
      expect((await ask(app, ['10.1000/alpha-only']))[0]!.source).toBe('service_request');
      step = 3_600_000;
      expect((await ask(app, ['10.1000/alpha-only']))[0]!.source).toBe('service_cache');
      expect(alpha.calls).toHaveLength(1);
      // the JWT says the time of day
      const at = Number(alpha.calls[0]!.claims!.iat);
      expect(Math.abs(at - realNow() / 1000)).toBeLessThan(60);
    } finally {
      Date.now = realNow;
    }
  });

  test('use order: any mix of sets, hits and drops evicts exactly as a plain least-recently-used list does', () => {
    const cache = new AnswerCache<string>(8, () => 0);
    const model: { key: string; doi: string }[] = []; // least recently used first
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 5000; i++) {
      const doi = `10.1000/d${rand(12)}`;
      const org = `org${rand(3)}`;
      const key = `${doi}|${org}`;
      const at = model.findIndex((m) => m.key === key);
      const op = rand(10);
      if (op < 5) {
        cache.set('alpha', doi, org, key, 60_000);
        if (at >= 0) model.splice(at, 1);
        model.push({ key, doi });
        if (model.length > 8) model.shift();
      } else if (op < 9) {
        expect(cache.get('alpha', doi, org)).toBe(at >= 0 ? key : undefined);
        if (at >= 0) model.push(...model.splice(at, 1));
      } else {
        cache.dropDoi(doi);
        for (let j = model.length - 1; j >= 0; j--) if (model[j]!.doi === doi) model.splice(j, 1);
      }
      expect(cache.size).toBe(model.length);
    }
  });

  test('bounded by bytes too: the least recently used go first, an answer larger than the whole cache is not kept, and the count returns to 0', () => {
    let now = 0;
    const cache = new AnswerCache<string>(
      1000,
      () => now,
      4000,
      (v) => 2 * v.length,
    );
    const org = orgIdentity(ORG);
    const answer = 'x'.repeat(500); // about 1,400 bytes an entry with its key and overhead
    cache.set('alpha', '10.1000/a', org, answer, 60_000);
    cache.set('alpha', '10.1000/b', org, answer, 60_000);
    expect(cache.get('alpha', '10.1000/a', org)).toBe(answer); // a is now the most recently used
    cache.set('alpha', '10.1000/c', org, answer, 60_000);
    expect([
      cache.get('alpha', '10.1000/a', org),
      cache.get('alpha', '10.1000/b', org),
      cache.get('alpha', '10.1000/c', org),
    ]).toEqual([answer, undefined, answer]);
    expect(cache.bytes).toBeLessThanOrEqual(4000);
    cache.set('alpha', '10.1000/huge', org, 'x'.repeat(5000), 60_000);
    expect(cache.get('alpha', '10.1000/huge', org)).toBeUndefined();
    expect(cache.size).toBe(2); // the huge one pushed nothing out
    cache.dropDoi('10.1000/a');
    now = 120_000;
    expect(cache.get('alpha', '10.1000/c', org)).toBeUndefined();
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  test('an org of long fields is keyed by its digest: the same org one key, another org another', () => {
    const long = {
      entityID: `https://idp.example/${'s'.repeat(1000)}`,
      eduPersonScopedAffiliation: `member@${'u'.repeat(1000)}.example`,
    };
    expect(orgIdentity(ORG)).not.toStartWith('#');
    expect(orgIdentity(long)).toMatch(/^#[A-Za-z0-9+/]{43}=$/);
    expect(orgIdentity({ ...long })).toBe(orgIdentity(long));
    expect(orgIdentity({ ...long, openAthensOrgID: 'oa-1' })).not.toBe(orgIdentity(long));
    expect(orgIdentity({ ...long, entityID: `${long.entityID}t` })).not.toBe(orgIdentity(long));
  });

  test('is off by default: every ask is live', async () => {
    // the platform as a config file gives it, without entitlementCacheSeconds
    const config = resolveConfig(
      {
        server: { listen: '127.0.0.1:0' },
        buckets: { production: { kind: 'local', path: 'bucket' } },
        platforms: [{ name: 'alpha', entitlementUrl: alpha.url, entitlementSecretEnv: 'ALPHA_SECRET' }],
        integrators: [{ name: 'tool', apiKey: 'tool-key-0001' }],
      },
      '/etc/doi-holdings/c.toml',
      { ALPHA_SECRET: SECRET },
    );
    const { app } = appWith(config.platforms);
    for (let i = 0; i < 3; i++) expect((await ask(app, ['10.1000/alpha-only']))[0]!.source).toBe('service_request');
    expect(alpha.calls).toHaveLength(3);
  });
});

describe('/metrics', () => {
  test('calls by every outcome, the breaker open, and answers by every source', async () => {
    alpha.mode = { kind: 'raw', status: 500, body: '' };
    const { app } = appWith(platforms({ beta: { entitlementTimeoutMs: 150 } }), {
      ...DEFAULT_ENTITLEMENTS,
      breakerFailures: 2,
      breakerCooldownMs: 60_000,
    });
    beta.mode = { kind: 'hang' };
    await ask(app, ['10.1000/alpha-only', '10.1000/beta-only']); // alpha: error; beta: time-out
    alpha.mode = { kind: 'raw', status: 200, body: 'garbage' };
    await ask(app, ['10.1000/alpha-only']); // malformed: alpha's second failure opens its breaker
    await ask(app, ['10.1000/alpha-only', '10.1000/open-1', '10.5555/nobody', 'not a doi']); // breaker_open
    const text = await (await app.handle(new Request('http://localhost/metrics'))).text();
    for (const line of [
      'doi_holdings_platform_calls_total{platform="alpha",outcome="error"} 1',
      'doi_holdings_platform_calls_total{platform="alpha",outcome="malformed"} 1',
      'doi_holdings_platform_calls_total{platform="alpha",outcome="breaker_open"} 1',
      'doi_holdings_platform_calls_total{platform="beta",outcome="timeout"} 1',
      'doi_holdings_platform_breaker_open{platform="alpha"} 1',
      'doi_holdings_platform_breaker_open{platform="beta"} 0',
      'doi_holdings_platform_breaker_opens_total{platform="alpha"} 1',
      'doi_holdings_entitlement_answers_total{env="production",source="unknown"} 4',
      'doi_holdings_entitlement_answers_total{env="production",source="oa_platform"} 1',
      'doi_holdings_entitlement_answers_total{env="production",source="none"} 1',
      'doi_holdings_entitlement_answers_total{env="production",source="invalid"} 1',
    ])
      expect(text).toContain(line);
    clock += 60_000;
    const later = await (await app.handle(new Request('http://localhost/metrics'))).text();
    expect(later).toContain('doi_holdings_platform_breaker_open{platform="alpha"} 0.5');
  });

  test('a paid holding on a platform without an Entitlement API is counted as publisher_not_supported', async () => {
    store.applyFilesSync([preparedFile([{ doi: '10.1000/zeta-paid', accessType: 'paid' }], { platform: 'zeta' })]);
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/zeta-paid']))[0]).toMatchObject({
      entitled: 'maybe',
      source: 'publisher_not_supported',
    });
    const text = await (await app.handle(new Request('http://localhost/metrics'))).text();
    expect(text).toContain(
      'doi_holdings_entitlement_answers_total{env="production",source="publisher_not_supported"} 1',
    );
  });
});

describe('what platforms answer, and what is made of it', () => {
  test("the platform's accessType when it is one of the four, else the deposited one; the accept header asks for JSON", async () => {
    alpha.mode = { kind: 'answer', entitled: () => 'yes', extra: () => ({ accessType: 'free' }) };
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({
      entitled: 'yes',
      accessType: 'free',
      source: 'service_request',
    });
    alpha.mode = { kind: 'answer', entitled: () => 'yes', extra: () => ({ accessType: 'gratis' }) };
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({
      entitled: 'yes',
      accessType: 'paid',
      source: 'service_request',
    });
    expect(alpha.calls[0]!.headers.accept).toBe('application/json');
  });

  test('an answer naming the DOI in another form or case is matched to it', async () => {
    alpha.mode = {
      kind: 'raw',
      status: 200,
      body: JSON.stringify({ entitlements: [{ doi: 'https://doi.org/10.1000/ALPHA-ONLY', entitled: 'yes' }] }),
    };
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({
      doi: '10.1000/alpha-only',
      entitled: 'yes',
      source: 'service_request',
    });
  });

  test("an entry past the answer's bounds (a vor URL that is not http or https) is that DOI's malformed answer; the other entries stand", async () => {
    store.applyFilesSync([preparedFile([{ doi: '10.1000/alpha-two', accessType: 'paid' }], { platform: 'alpha' })]);
    alpha.mode = {
      kind: 'raw',
      status: 200,
      body: JSON.stringify({
        entitlements: [
          { doi: '10.1000/alpha-only', entitled: 'yes', vor: [{ url: 'ftp://files.example/a.pdf' }] },
          { doi: '10.1000/alpha-two', entitled: 'yes', vor: [{ url: 'https://files.example/b.pdf' }] },
        ],
      }),
    };
    const { app } = appWith(platforms());
    const got = await ask(app, ['10.1000/alpha-only', '10.1000/alpha-two']);
    expect(got[0]).toMatchObject({ statusCode: 200, entitled: 'maybe', source: 'unknown' });
    expect(got[1]).toMatchObject({
      entitled: 'yes',
      source: 'service_request',
      vor: [{ url: 'https://files.example/b.pdf' }],
    });
  });

  test('a compressed answer is malformed, not expanded: the answer bound holds for the bytes sent', async () => {
    // 8 MiB of answer in a few KB of gzip: past the 4 MiB bound once expanded
    const big = JSON.stringify({
      entitlements: [
        {
          doi: '10.1000/alpha-only',
          entitled: 'yes',
          document: `https://alpha.example/${'x'.repeat(8 * 1024 * 1024)}`,
        },
      ],
    });
    alpha.mode = {
      kind: 'raw',
      status: 200,
      body: Bun.gzipSync(Buffer.from(big)),
      headers: { 'content-encoding': 'gzip' },
    };
    const { app, entitlements } = appWith(platforms());
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({
      statusCode: 200,
      entitled: 'maybe',
      source: 'unknown',
    });
    // a small one too: the client asked for identity
    alpha.mode = {
      kind: 'raw',
      status: 200,
      body: Bun.gzipSync(
        Buffer.from(JSON.stringify({ entitlements: [{ doi: '10.1000/alpha-only', entitled: 'yes' }] })),
      ),
      headers: { 'content-encoding': 'gzip' },
    };
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({ entitled: 'maybe', source: 'unknown' });
    // bytes that are no gzip at all: read as they came (a malformed answer), never handed to a decompressor (an error)
    alpha.mode = { kind: 'raw', status: 200, body: 'not gzip at all', headers: { 'content-encoding': 'gzip' } };
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({ entitled: 'maybe', source: 'unknown' });
    expect(entitlements.clients.get('alpha')!.figures.calls).toMatchObject({ malformed: 3, error: 0 });
    expect(alpha.calls[0]!.headers['accept-encoding']).toBe('identity');
  });

  test('a redirect is an error, never followed: the org goes nowhere else, and no answer from elsewhere counts', async () => {
    beta.mode = { kind: 'answer', entitled: () => 'yes' };
    alpha.mode = { kind: 'raw', status: 307, body: '', headers: { location: beta.url } };
    const { app, entitlements } = appWith(platforms());
    expect((await ask(app, ['10.1000/alpha-only']))[0]).toMatchObject({
      statusCode: 200,
      entitled: 'maybe',
      source: 'unknown',
    });
    expect(beta.calls).toHaveLength(0);
    expect(entitlements.clients.get('alpha')!.figures.calls.error).toBe(1);
  });

  test('one DOI answered twice: the answer when both agree, maybe when they do not', async () => {
    store.applyFilesSync([preparedFile([{ doi: '10.1000/alpha-two', accessType: 'paid' }], { platform: 'alpha' })]);
    const entries = [
      { doi: '10.1000/alpha-only', entitled: 'no' },
      { doi: '10.1000/ALPHA-ONLY', entitled: 'yes' },
      { doi: '10.1000/alpha-two', entitled: 'yes' },
      { doi: '10.1000/alpha-two', entitled: 'yes' },
      { doi: '10.1000/alpha-only', entitled: 'no' },
    ];
    alpha.mode = { kind: 'raw', status: 200, body: JSON.stringify({ entitlements: entries }) };
    const { app } = appWith(platforms());
    const got = await ask(app, ['10.1000/alpha-only', '10.1000/alpha-two']);
    expect(got[0]).toMatchObject({ statusCode: 200, entitled: 'maybe', source: 'unknown' });
    expect(got[1]).toMatchObject({ entitled: 'yes', source: 'service_request' });
  });

  test('a request without org: platforms are asked with an empty org, and answers show it', async () => {
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/alpha-only'], null))[0]).toMatchObject({
      entitled: 'yes',
      source: 'service_request',
      org: {},
    });
    expect(alpha.calls[0]!.body.org).toEqual({});
  });

  test('two platforms hold a DOI so that the deposit answers: the first by platform name answers', async () => {
    store.applyFilesSync([
      preparedFile([{ doi: '10.1000/two-open', accessType: 'open', vor: [{ url: 'https://beta.example/b.pdf' }] }], {
        platform: 'beta',
      }),
      preparedFile([{ doi: '10.1000/two-open', accessType: 'free', vor: [{ url: 'https://alpha.example/a.pdf' }] }], {
        platform: 'alpha',
      }),
    ]);
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/two-open']))[0]).toMatchObject({
      accessType: 'free',
      source: 'oa_platform',
      vor: [{ url: 'https://alpha.example/a.pdf' }],
    });
  });

  test("every platform says no: the first platform's no by name, whichever answered first", async () => {
    // beta answers last: the last answer in is not the one that counts
    alpha.mode = { kind: 'answer', entitled: () => 'no', extra: () => ({ document: 'https://alpha.example/landing' }) };
    beta.mode = {
      kind: 'answer',
      entitled: () => 'no',
      delayMs: 100,
      extra: () => ({ document: 'https://beta.example/landing' }),
    };
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/both-paid']))[0]).toMatchObject({
      entitled: 'no',
      document: 'https://alpha.example/landing',
    });
  });

  test('staging asks the same platforms as production', async () => {
    staging.applyFilesSync([preparedFile([{ doi: '10.1000/trial-paid', accessType: 'paid' }], { platform: 'alpha' })]);
    const { app } = appWith(platforms());
    expect((await ask(app, ['10.1000/trial-paid'], ORG, '/staging/v2.2/entitlements'))[0]).toMatchObject({
      entitled: 'yes',
      source: 'service_request',
    });
    expect(alpha.calls.map((c) => c.body.dois)).toEqual([['10.1000/trial-paid']]);
  });
});
