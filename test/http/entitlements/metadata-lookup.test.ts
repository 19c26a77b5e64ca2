import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DEFAULT_ENTITLEMENTS, DEFAULT_LOOKUP, type MetadataLookupSettings } from '../../../src/config/index.ts';
import { Entitlements, EntitlementsResponse } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { type CrossrefApi, type FakeWork, startCrossrefApi } from '../../support/crossref-api.ts';
import { CROSSREF_FIXTURES } from '../../support/crossref-works.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { KEY, KEY_NO_UPDATES, makeApp, platformsWithoutApi, post } from '../http-support.ts';

/**
 * Entries by metadata (docs/interface.md, "Entries by metadata"), through the HTTP API against a loopback server
 * playing Crossref's REST API with works in its recorded shape (test/fixtures/crossref/lookup-works.json): a
 * preprint followed to its published version, a bibliographic search with journal, authors and year, ties, no
 * match, a 429, a time-out, and the lookup cache (counted in calls to Crossref, not timed).
 */

type Obj = Record<string, unknown> & { statusCode: number };
const checkResponse = TypeCompiler.Compile(EntitlementsResponse);
const WORKS = JSON.parse(readFileSync(join(CROSSREF_FIXTURES, 'lookup-works.json'), 'utf8')) as FakeWork[];

const held = storePerTest();
let crossref: CrossrefApi;

beforeAll(async () => {
  crossref = await startCrossrefApi({ works: WORKS });
});
afterAll(() => crossref.stop());

function lookupSettings(over: Partial<MetadataLookupSettings> = {}): MetadataLookupSettings {
  return { url: crossref.url, mailto: 'ops@example.org', ...DEFAULT_LOOKUP, ...over };
}

function appWith(lookup: MetadataLookupSettings | null = lookupSettings()): { app: App; entitlements: Entitlements } {
  const entitlements = new Entitlements(platformsWithoutApi('acme'), {
    ...DEFAULT_ENTITLEMENTS,
    ...(lookup ? { lookup } : {}),
  });
  return { app: makeApp({ production: { store: held.store } }, { entitlements }), entitlements };
}

async function ask(app: App, dois: unknown[], key = KEY_NO_UPDATES): Promise<Obj[]> {
  const r = await post(app, '/v2.2/entitlements', JSON.stringify({ dois }), { key });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  const body = JSON.parse(text) as { entitlements: Obj[] };
  expect([...checkResponse.Errors(body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  return body.entitlements;
}

const VITAMIN_C = 'Effects of vitamin C on the common cold — a randomised trial';
const OPEN_VITAMIN_C = {
  doi: '10.5555/JMED.2021.0042',
  statusCode: 200,
  entitled: 'yes',
  accessType: 'open',
  source: 'oa_platform',
};

beforeEach(() => {
  crossref.calls.length = 0;
  crossref.clearFaults();
  held.store.applyFilesSync([
    preparedFile(
      [
        { doi: '10.5555/jmed.2021.0042', accessType: 'open' },
        { doi: '10.5555/chips.v2', accessType: 'paid' },
        { doi: '10.5555/micro.a', accessType: 'free' },
      ],
      { platform: 'acme' },
    ),
  ]);
});

describe('an entry by metadata is answered as the DOI it resolves to, its uid echoed', () => {
  test('a bibliographic search with journal, authors and year: the published article, not the preprint', async () => {
    const { app } = appWith();
    const answers = await ask(app, [
      { title: VITAMIN_C, journal: 'Journal of Medicine', authors: ['Jane Doe'], year: 2020, uid: 'a' },
      '10.5555/micro.a',
    ]);
    expect(answers).toEqual([
      { ...OPEN_VITAMIN_C, uid: 'a' },
      { doi: '10.5555/micro.a', statusCode: 200, entitled: 'yes', accessType: 'free', source: 'oa_platform' },
    ]);
    const search = crossref.calls.find((c) => c.path === '/works')!;
    expect(Object.fromEntries(search.params)).toMatchObject({
      'query.bibliographic': VITAMIN_C,
      'query.container-title': 'Journal of Medicine',
      'query.author': 'Jane Doe',
      filter: 'from-pub-date:2020',
      mailto: 'ops@example.org',
    });
    expect(search.headers.get('user-agent')).toBe('doi-holdings (mailto:ops@example.org)');
  });

  test('a Metadata Plus token goes as its header; mailto in every query', async () => {
    const { app } = appWith(lookupSettings({ plusToken: 'plus-token-0123' }));
    await ask(app, [{ preprintDoi: '10.1101/2020.03.01.000001', uid: 'a' }]);
    expect(crossref.calls.map((c) => [c.headers.get('crossref-plus-api-token'), c.params.get('mailto')])).toEqual([
      ['Bearer plus-token-0123', 'ops@example.org'],
    ]);
  });

  test('without a journal, the latest published version of that title (an earlier proceedings paper loses)', async () => {
    const { app } = appWith();
    expect(await ask(app, [{ title: VITAMIN_C, uid: 'b' }])).toEqual([{ ...OPEN_VITAMIN_C, uid: 'b' }]);
  });

  test('a preprint DOI followed to its published version (relation is-preprint-of); of two, the later', async () => {
    const { app } = appWith();
    expect(
      await ask(app, [
        { preprintDoi: 'https://doi.org/10.1101/2020.03.01.000001', uid: 'p1' },
        { title: 'Semiconductors in chip manufacturing', preprintDoi: '10.1101/2022.09.09.000002', uid: 'p2' },
      ]),
    ).toEqual([
      { ...OPEN_VITAMIN_C, doi: '10.5555/jmed.2021.0042', uid: 'p1' },
      {
        doi: '10.5555/chips.v2',
        statusCode: 200,
        entitled: 'maybe',
        accessType: 'paid',
        source: 'publisher_not_supported',
        uid: 'p2',
      },
    ]);
    expect(crossref.calls.map((c) => c.path)).toContain('/works/10.1101%2F2020.03.01.000001');
  });

  test('a tie (same title, same date) goes to the smallest DOI; exactTitleMatch keeps letter case and punctuation', async () => {
    const { app } = appWith();
    const answers = await ask(app, [
      { title: 'growth of e coli in h2o and saline', uid: 'no' }, // "and" is not "&": not the same title
      { title: 'Growth of E. coli in H2O & saline', uid: 'tie' },
      { title: 'Growth of E. coli in H2O & Saline', exactTitleMatch: true, uid: 'exact' },
      { title: 'Growth of E. coli in H2O & SALINE', exactTitleMatch: true, uid: 'exact-case' },
    ]);
    expect(answers.map((a) => [a.uid, a.doi, a.statusCode])).toEqual([
      ['no', 'unknown', 404],
      ['tie', '10.5555/micro.a', 200],
      ['exact', '10.5555/micro.b', 404], // found, and held by no platform here
      ['exact-case', 'unknown', 404],
    ]);
  });

  test('nothing found is a 404 entry with doi "unknown" and the uid (updates [] for the feature)', async () => {
    const { app } = appWith();
    const answers = await ask(
      app,
      [
        { title: VITAMIN_C, year: 2022, uid: 'too-late' },
        { title: 'An unpublished preprint', uid: 'preprint-only' },
        { preprintDoi: '10.1101/0000.unknown', uid: 'no-such-preprint' },
        { title: VITAMIN_C, journal: 'Journal of Chips', uid: 'other-journal' },
        { title: VITAMIN_C, authors: ['Smith, Alan'], uid: 'other-author' },
      ],
      KEY,
    );
    expect(answers).toEqual(
      ['too-late', 'preprint-only', 'no-such-preprint', 'other-journal', 'other-author'].map((uid) => ({
        doi: 'unknown',
        statusCode: 404,
        uid,
        updates: [],
      })),
    );
  });

  test('an entry that cannot be looked up is a 400 entry saying why; a member of the wrong type too, that entry alone', async () => {
    const { app } = appWith();
    expect(
      await ask(app, [
        { journal: 'Journal of Medicine', uid: 'x' },
        { preprintDoi: 'not a doi', uid: 'y' },
        { title: '?!', uid: 'z' },
      ]),
    ).toEqual([
      {
        statusCode: 400,
        message: 'an entry without doi is looked up by its metadata, and needs a title or a preprintDoi',
        uid: 'x',
      },
      { statusCode: 400, message: expect.stringMatching(/^preprintDoi: /), uid: 'y' },
      { statusCode: 400, message: 'title: has no letter or digit to match a title by', uid: 'z' },
    ]);
    expect(crossref.calls).toEqual([]);
    // a malformed member is its entry's 400, naming it; the other entries keep their answers, and beside a doi the
    // members are not read at all (decision 27)
    const mixed = await ask(app, [
      { title: 'x', year: '2020', uid: 'a' },
      { title: 'x', authors: [{ family: 'Doe' }], uid: 'b' },
      { doi: '10.5555/nobody-holds-this', year: 'then', authors: 7, uid: 'c' },
    ]);
    expect(mixed).toEqual([
      { statusCode: 400, message: expect.stringMatching(/^year: expected integer/), uid: 'a' },
      { statusCode: 400, message: expect.stringMatching(/^authors\.0: expected string/), uid: 'b' },
      expect.objectContaining({ doi: '10.5555/nobody-holds-this', statusCode: 404, uid: 'c' }),
    ]);
    expect(crossref.calls).toEqual([]);
  });

  test('without [entitlements.lookup], an entry by metadata stays a 400 entry, and Crossref is not called', async () => {
    const { app } = appWith(null);
    expect(await ask(app, [{ title: VITAMIN_C, uid: 'a' }])).toEqual([
      {
        statusCode: 400,
        message: 'this entry has no doi: entitlements are answered by DOI only, not by title or other metadata',
        uid: 'a',
      },
    ]);
    expect(crossref.calls).toEqual([]);
  });
});

describe('the lookup cache', () => {
  test('a repeated request is answered from the cache, with no call to Crossref; entries alike are one lookup', async () => {
    const { app, entitlements } = appWith();
    const dois = [
      { title: VITAMIN_C, journal: 'Journal of Medicine', uid: '1' },
      {
        title: 'EFFECTS OF VITAMIN C ON THE COMMON COLD: A RANDOMISED TRIAL',
        journal: 'journal of medicine',
        uid: '2',
      },
      { preprintDoi: '10.1101/2020.03.01.000001', uid: '3' },
    ];
    const first = await ask(app, dois);
    expect(crossref.calls.length).toBe(2); // the two alike searches made one call
    const made = crossref.calls.length;
    expect(await ask(app, dois)).toEqual(first);
    expect(crossref.calls.length - made).toBe(0);
    expect(Object.fromEntries(entitlements.lookup!.counts)).toEqual({
      found: 2,
      not_found: 0,
      error: 0,
      timeout: 0,
      cached: 3,
    });
    const metrics = await (await app.handle(new Request('http://localhost/metrics'))).text();
    expect(metrics).toContain('doi_holdings_metadata_lookups_total{outcome="found"} 2\n');
    expect(metrics).toContain('doi_holdings_metadata_lookups_total{outcome="cached"} 3\n');
    expect(metrics).toContain('doi_holdings_metadata_lookup_calls_total 2\n');
    expect(metrics).toContain('doi_holdings_metadata_lookup_cache_entries 2\n');
  });

  test('"nothing found" is not kept: the next request asks again', async () => {
    const { app } = appWith();
    await ask(app, [{ title: 'No such title anywhere', uid: 'a' }]);
    await ask(app, [{ title: 'No such title anywhere', uid: 'a' }]);
    expect(crossref.calls.length).toBe(2);
  });

  test('bounded by cacheEntries: the least recently used goes first', async () => {
    const { app } = appWith(lookupSettings({ cacheEntries: 1 }));
    const a = { title: VITAMIN_C, uid: 'a' };
    const b = { preprintDoi: '10.1101/2020.03.01.000001', uid: 'b' };
    await ask(app, [a]);
    await ask(app, [b]); // a out
    const before = crossref.calls.length;
    await ask(app, [b]);
    expect(crossref.calls.length).toBe(before);
    await ask(app, [a]);
    expect(crossref.calls.length).toBe(before + 1);
  });
});

describe('polite and bounded', () => {
  test('a 429 whose Retry-After ends within the time-out: the call is made again after it, and found', async () => {
    const { app, entitlements } = appWith(lookupSettings({ timeoutMs: 5000 }));
    crossref.inject({ kind: 'status', status: 429, retryAfter: '0.2', times: 1 });
    expect(await ask(app, [{ title: VITAMIN_C, uid: 'a' }])).toEqual([{ ...OPEN_VITAMIN_C, uid: 'a' }]);
    expect(crossref.calls.map((c) => c.status)).toEqual([429, 200]);
    // the gate held the retry until the pause the 429 asked for (test/crossref/rate-gate.test.ts holds the gate)
    expect(entitlements.lookup!.gate.pausedUntil).toBeLessThanOrEqual(performance.now());
    expect(entitlements.lookup!.gate.pausedUntil).toBeGreaterThan(0);
  });

  test('a 429 past the deadline: no call is sent meanwhile, and the entries are 504s (unavailable), not 404s', async () => {
    const { app, entitlements } = appWith(lookupSettings({ timeoutMs: 300 }));
    crossref.inject({ kind: 'status', status: 429, retryAfter: '60', times: 1 });
    const answers = await ask(app, [
      { title: VITAMIN_C, uid: 'a' },
      { preprintDoi: '10.1101/2022.09.09.000002', uid: 'b' },
      '10.5555/micro.a',
    ]);
    expect(crossref.calls.length).toBe(1); // the 429 stopped every other call
    for (const [i, uid] of ['a', 'b'].entries())
      expect(answers[i]).toEqual({
        doi: 'unknown',
        statusCode: 504,
        message: expect.stringContaining('HTTP 429'),
        entitled: 'maybe',
        source: 'unknown',
        uid,
      });
    expect(answers[2]!.statusCode).toBe(200);
    expect(entitlements.lookup!.counts.get('error')).toBe(2);
  });

  test('a Crossref that does not answer within the time-out: a 504 entry, as a platform time-out is', async () => {
    const { app, entitlements } = appWith(lookupSettings({ timeoutMs: 200 }));
    crossref.inject({ kind: 'stall', ms: 2000, times: 1 });
    const answers = await ask(app, [{ title: VITAMIN_C, uid: 'slow' }]);
    expect(answers).toEqual([
      {
        doi: 'unknown',
        statusCode: 504,
        message: 'the metadata lookup at Crossref did not finish within its time-out',
        entitled: 'maybe',
        source: 'unknown',
        uid: 'slow',
      },
    ]);
    expect(entitlements.lookup!.counts.get('timeout')).toBe(1);
  });

  test('a Crossref failure (HTTP 500) is a 504 entry naming it; never a 404', async () => {
    const { app } = appWith();
    crossref.inject({ kind: 'status', status: 500, times: 1 });
    const [a] = await ask(app, [{ title: VITAMIN_C, uid: 'a' }]);
    expect(a).toMatchObject({ doi: 'unknown', statusCode: 504, message: expect.stringContaining('HTTP 500') });
  });

  test('items that are no works (null, a number) in a reply are passed over, not a 500', async () => {
    const { app } = appWith();
    const body = JSON.stringify({ status: 'ok', message: { 'total-results': 2, items: [null, 7, ['x']] } });
    crossref.inject({ kind: 'status', status: 200, body, times: 1 });
    const [a] = await ask(app, [{ title: VITAMIN_C, uid: 'a' }]);
    expect(a).toEqual({ doi: 'unknown', statusCode: 404, uid: 'a' });
    // and the next request is answered as ever (its pooled entries were given back)
    const [b] = await ask(app, [{ title: VITAMIN_C, uid: 'b' }]);
    expect(b).toMatchObject({ statusCode: 200, uid: 'b' });
  });

  test('no more calls in flight than the concurrency setting (Crossref advertising more)', async () => {
    const { app } = appWith(lookupSettings({ concurrency: 2 }));
    const dois = Array.from({ length: 12 }, (_, i) => ({ title: `Some title number ${i}`, uid: String(i) }));
    await ask(app, dois);
    expect(crossref.calls.length).toBe(12);
    expect(crossref.maxInFlight).toBeLessThanOrEqual(2);
  });
});
