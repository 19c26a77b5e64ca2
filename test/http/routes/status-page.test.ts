import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DocumentHistory } from '../../../src/history/index.ts';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { BASE, documents, importSample, makeApp, postDois } from '../http-support.ts';

/**
 * GET /doi/{doi} (docs/interface.md, "Document status page") through the app, over real LMDB stores: production
 * holds the real Retraction Watch sample and deposits with known dates; staging holds one deposit of its own.
 */

const checkHistory = TypeCompiler.Compile(DocumentHistory);
let dir: ReturnType<typeof tempDir>;
let production: Store;
let staging: Store;
let app: App;
const fileKeys: string[] = [];

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 9, 30);
const MOVED = '10.5555/Moved.1';
const PAREN = '10.1000/abc(12)x;y';
const XSS = '10.1000/"><script>alert(1)</script><img/src=x/onerror=alert(2)>';

/** Applies one deposit file in the order written, whatever its time (as --ingest does); throws unless it was applied. */
function apply(store: Store, lines: object[], platform: string, time: number): void {
  const f = { ...preparedFile(lines, { platform, time }), inOrderGiven: true };
  fileKeys.push(f.key);
  const [status] = store.applyFilesSync([f]);
  if (status?.status !== 'applied') throw new Error(`deposit not applied: ${status?.status}`);
}

beforeAll(async () => {
  dir = tempDir();
  production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 26 });
  await importSample([production]);
  apply(
    production,
    [
      { doi: MOVED, accessType: 'paid', vor: [{ url: 'https://acme.example/a.pdf' }] },
      { doi: PAREN, accessType: 'open' },
      { doi: XSS },
    ],
    'acme',
    T0,
  );
  apply(
    production,
    [{ doi: MOVED, accessType: 'open', vor: [{ url: 'https://acme.example/b.pdf' }] }],
    'acme',
    T0 + DAY,
  );
  apply(production, [{ doi: MOVED, accessType: 'free' }], 'beta', T0 + 2 * DAY);
  apply(production, [{ doi: MOVED, deleted: true }], 'beta', T0 + 3 * DAY);
  apply(production, [{ doi: MOVED, accessType: 'permFree' }], 'beta', T0 + 4 * DAY);
  apply(production, [{ doi: '10.3892/ijo.2017.3871', accessType: 'paid' }], 'acme', T0);
  apply(staging, [{ doi: '10.7777/staged', accessType: 'open' }], 'acme', T0);
  app = makeApp({ production: { store: production }, staging: { store: staging } });
});

afterAll(async () => {
  await production.close();
  await staging.close();
  dir.remove();
});

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  app.handle(new Request(`${BASE}${path}`, { method, headers }));
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

async function historyOf(path: string): Promise<DocumentHistory> {
  const r = await get(path, { accept: 'application/json' });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = await r.json();
  expect(checkHistory.Errors(body).First()).toBeUndefined();
  return body as DocumentHistory;
}

/** The text of the h3 headings of the timeline, in page order. */
function timelineTitles(page: string): string[] {
  const ol = page.slice(page.indexOf('<ol class="timeline"'), page.indexOf('</ol>'));
  return [...ol.matchAll(/<h3>([^<]*)<\/h3>/g)].map((m) => m[1]!);
}

describe('the page of a retracted DOI from the real sample', () => {
  test('is HTML with a strict CSP, the Retracted badge, and the notices newest first with reasons and notice links', async () => {
    const r = await get('/doi/10.3892/ijo.2017.3871', { accept: BROWSER_ACCEPT });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toStartWith("default-src 'none'; style-src 'sha256-");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('script-src');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    // one URL gives HTML or JSON by Accept: a shared cache must key on it; and no reader's page leaks as a referrer
    expect(r.headers.get('vary')).toBe('accept');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    const asJson = await get('/doi/10.3892/ijo.2017.3871', { accept: 'application/json' });
    expect([asJson.status, asJson.headers.get('vary')]).toEqual([200, 'accept']);
    const page = await r.text();
    expect(page).not.toContain('<script');
    expect(page).toContain('<p class="badge">Retracted</p>');
    expect(page).toContain('<a href="https://doi.org/10.3892/ijo.2017.3871">10.3892/ijo.2017.3871</a>');
    expect(timelineTitles(page)).toEqual(['Added by acme', 'Retraction', 'Correction']);
    expect(page).toContain('<li>Unreliable Data</li>');
    expect(page).toContain('Notice: <a href="https://doi.org/10.3892/ijo.2023.5552">10.3892/ijo.2023.5552</a>');
    expect(page.indexOf('2023-08-04')).toBeLessThan(page.indexOf('2022-12-07'));
  });

  test('its JSON has the same events, matches the published schema, and dates the status by the retraction', async () => {
    const h = await historyOf('/doi/10.3892/ijo.2017.3871');
    expect(h.status).toEqual({
      code: 'retracted',
      label: 'Retracted',
      tone: 'alert',
      date: '2023-08-04',
      source: 'retraction-watch',
    });
    expect(h.events.map((e) => [e.kind, e.date, e.kind === 'notice' ? e.updateType : e.change])).toEqual([
      ['holding', new Date(T0).toISOString(), 'added'],
      ['notice', '2023-08-04', 'retraction'],
      ['notice', '2022-12-07', 'correction'],
    ]);
    const json = await (await get('/doi/10.3892/ijo.2017.3871?format=json')).json();
    expect(json).toEqual(h);
  });
});

describe('a DOI with holdings changes', () => {
  test('every change per platform, newest first, with access types old -> new and what else changed', async () => {
    const h = await historyOf(`/doi/${MOVED}`);
    expect(h.doi).toBe(MOVED);
    expect(h.status.code).toBe('none');
    expect(h.holdings).toEqual([
      { platform: 'acme', held: true, accessType: 'open' },
      { platform: 'beta', held: true, accessType: 'permFree' },
    ]);
    const iso = (days: number) => new Date(T0 + days * DAY).toISOString();
    expect(h.events).toEqual([
      { kind: 'holding', date: iso(4), platform: 'beta', change: 're-added', accessType: 'permFree' },
      { kind: 'holding', date: iso(3), platform: 'beta', change: 'removed', previousAccessType: 'free' },
      { kind: 'holding', date: iso(2), platform: 'beta', change: 'added', accessType: 'free' },
      {
        kind: 'holding',
        date: iso(1),
        platform: 'acme',
        change: 'changed',
        accessType: 'open',
        previousAccessType: 'paid',
        changed: ['access', 'links'],
      },
      { kind: 'holding', date: iso(0), platform: 'acme', change: 'added', accessType: 'paid' },
    ]);
    const page = await (await get(`/doi/${MOVED}`)).text();
    expect(timelineTitles(page)).toEqual([
      'Added again by beta',
      'Removed by beta',
      'Added by beta',
      'Changed by acme',
      'Added by acme',
    ]);
    expect(page).toContain('<p>Access: paid access → open access</p><p>Links to the full text changed</p>');
    expect(page).toContain('<p class="badge">No known updates</p>');
    expect(page).toContain(`<time datetime="${iso(3)}">2026-01-08 09:30 UTC</time>`);
  });

  test('deposit file names stay internal: none is on the page or in its JSON', async () => {
    for (const path of [`/doi/${MOVED}`, `/doi/${MOVED}?format=json`, '/doi/10.3892/ijo.2017.3871']) {
      const text = await (await get(path)).text();
      for (const key of fileKeys) expect(text).not.toContain(key.split('/')[1]!.slice(0, 24));
      expect(text).not.toContain('.jsonl.gz');
    }
  });
});

describe('the DOI in the path', () => {
  test('is matched case-insensitively, raw or percent-encoded', async () => {
    const want = await (await get(`/doi/${PAREN}`)).text();
    expect(want).toContain('<p class="badge">No known updates</p>');
    // a doi.org link after /doi/ is read as the APIs read one: its own percent-encoding decoded too
    for (const path of [
      '/doi/10.1000/ABC(12)x;y',
      '/doi/10.1000%2FABC%2812%29X%3BY',
      '/doi/10.1000/abc%2812%29x%3by',
      '/doi/https:%2F%2Fdoi.org%2F10.1000%252Fabc(12)x%253By',
    ]) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(want);
    }
  });

  test('a DOI full of markup is shown as text: no element of it reaches the page', async () => {
    const page = await (await get(`/doi/${encodeURIComponent(XSS)}`)).text();
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain(
      '<h1><span class="meta">DOI</span> <a href="https://doi.org/10.1000/%22%3E%3Cscript%3Ealert(1)%3C/script%3E%3Cimg/src%3Dx/onerror%3Dalert(2)%3E">',
    );
    expect(page).toContain(
      '>10.1000/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img/src=x/onerror=alert(2)&gt;</a></h1>',
    );
  });

  test('an unknown DOI is a 404 page that says no history is known; JSON gets a 404 error body', async () => {
    const r = await get('/doi/10.9999/Unknown');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await r.text();
    expect(page).toContain('No history known');
    expect(page).toContain('10.9999/Unknown');
    const j = await get('/doi/10.9999/Unknown', { accept: 'application/json' });
    expect(j.status).toBe(404);
    expect(await j.json()).toEqual({
      statusCode: 404,
      error: 'NOT_FOUND',
      message: 'no history is known for DOI 10.9999/Unknown',
    });
  });

  test('a string that is not a DOI is a 400 page that shows it as text and says why', async () => {
    const cases: [string, string][] = [
      ['/doi/%3Cscript%3Ealert(1)%3C%2Fscript%3E', ': expected 10.<4-9 digit registrant>'],
      ['/doi/javascript:alert(1)', ': expected 10.<4-9 digit registrant>'],
      ['/doi/10.1000/a%00b', 'control or format character (U+0000)'],
      ['/doi/10.1000/%E0%A4%A', 'malformed percent-encoding'],
      ['/doi/', 'names no DOI'],
    ];
    for (const [path, why] of cases) {
      const r = await get(path);
      expect(r.status).toBe(400);
      const page = await r.text();
      expect(page).toContain('Not a DOI');
      expect(page).toContain(why.replace(/</g, '&lt;').replace(/>/g, '&gt;'));
      expect(page).not.toContain('<script');
    }
    const j = await get('/doi/javascript:alert(1)?format=json');
    expect(j.status).toBe(400);
    expect(((await j.json()) as { error: string }).error).toBe('BAD_REQUEST');
  });
});

describe('formats, methods and caching', () => {
  test('Accept decides between HTML and JSON by quality; ?format overrides; an unknown format is a 400', async () => {
    const type = async (headers: Record<string, string>, q = '') =>
      (await get(`/doi/${MOVED}${q}`, headers)).headers.get('content-type');
    expect(await type({})).toStartWith('text/html');
    expect(await type({ accept: BROWSER_ACCEPT })).toStartWith('text/html');
    expect(await type({ accept: '*/*' })).toStartWith('text/html');
    expect(await type({ accept: 'application/json' })).toStartWith('application/json');
    expect(await type({ accept: 'text/html;q=0.5, application/json' })).toStartWith('application/json');
    expect(await type({ accept: 'application/json;q=0.5, text/html' })).toStartWith('text/html');
    expect(await type({ accept: 'application/json' }, '?format=html')).toStartWith('text/html');
    expect(await type({ accept: BROWSER_ACCEPT }, '?format=json')).toStartWith('application/json');
    const bad = await get(`/doi/${MOVED}?format=xml`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toBe('format must be json or html, not "xml"');
  });

  test('HEAD answers like GET without a body; other methods are 405 with Allow', async () => {
    for (const path of [`/doi/${MOVED}`, '/doi/10.9999/none', '/doi/nope', `/doi/${MOVED}?format=json`]) {
      const g = await get(path);
      const h = await get(path, {}, 'HEAD');
      expect(h.status).toBe(g.status);
      expect(h.headers.get('content-type')).toBe(g.headers.get('content-type'));
      expect(h.headers.get('etag')).toBe(g.headers.get('etag'));
      expect(await h.text()).toBe('');
      if (g.status === 200) expect(h.headers.get('content-length')).toBe(String(Buffer.byteLength(await g.text())));
    }
    const p = await get(`/doi/${MOVED}`, {}, 'POST');
    expect(p.status).toBe(405);
    expect(p.headers.get('allow')).toBe('GET, HEAD');
  });

  test('an ETag answers a revalidation with 304 until the history changes', async () => {
    const doi = '10.5555/etag.1';
    apply(production, [{ doi, accessType: 'paid' }], 'acme', T0);
    const first = await get(`/doi/${doi}`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[0-9a-z]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await get(`/doi/${doi}`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    // as caches send it (RFC 9110 13.1.2): one of a list, the strong form (compared weakly), or `*`
    for (const header of [`"other", ${etag}`, etag.slice(2), '*'])
      expect((await get(`/doi/${doi}`, { 'if-none-match': header })).status).toBe(304);
    expect((await get(`/doi/${doi}`, { 'if-none-match': 'W/"other"' })).status).toBe(200);
    apply(production, [{ doi, accessType: 'open' }], 'acme', T0 + DAY);
    const changed = await get(`/doi/${doi}`, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('paid access → open access');
  });
});

describe('environments', () => {
  test('/staging/doi/ answers from the staging store, with a banner; production does not know staging DOIs', async () => {
    const r = await get('/staging/doi/10.7777/STAGED');
    expect(r.status).toBe(200);
    const page = await r.text();
    expect(page).toContain('Staging: test data');
    expect(timelineTitles(page)).toEqual(['Added by acme']);
    expect((await get('/doi/10.7777/staged')).status).toBe(404);
    expect((await get('/staging/doi/10.3892/ijo.2017.3871')).status).toBe(404);
  });

  test('without a staging store, /staging/doi/ is a 404 that says staging is not configured', async () => {
    const only = makeApp({ production: { store: production } });
    const r = await only.handle(new Request(`${BASE}/staging/doi/10.7777/staged?format=json`));
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: string }).error).toBe('NOT_CONFIGURED');
  });
});

describe('update notices a source no longer lists', () => {
  test('stay in the timeline, marked, and no longer count for the badge', async () => {
    const own = Store.open(`${dir.path}/notices`, 'production', { mapSizeBytes: 1 << 26 });
    try {
      const header =
        'Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes';
      const row = (id: number, url: string, date: string, notice: string, nature: string) =>
        `${id},,,,J,P,,,${url};,Research Article;,${date} 0:00,${notice},0,1/1/2019 0:00,10.4444/w.1,0,${nature},+Error in Data;,No,`;
      async function* csv(rows: string[]) {
        yield Buffer.from(`${[header, ...rows].join('\n')}\n`);
      }
      const both = [
        row(1, 'javascript:alert(1)', '3/1/2020', '10.4444/n.1', 'Retraction'),
        row(2, 'https://rw.example/c', '1/1/2021', '10.4444/n.2', 'Correction'),
        row(3, 'https://rw.example/x', '1/1/2020', '10.4444/n.3', 'Expression of concern'),
      ];
      await importUpdates([own], 'retraction-watch-csv', csv(both));
      const a = makeApp({ production: { store: own } });
      const before = await a.handle(new Request(`${BASE}/doi/10.4444/w.1`));
      const page = await before.text();
      expect(page).toContain('<p class="badge">Retracted</p>');
      // a URL that is not http(s) is shown as text, never as a link
      expect(page).toContain('<li>javascript:alert(1)</li>');
      expect(page).not.toContain('href="javascript');
      expect(page).toContain('<a class="url" href="https://rw.example/c">https://rw.example/c</a>');
      await importUpdates([own], 'retraction-watch-csv', csv(both.slice(1)));
      const after = (await (
        await a.handle(new Request(`${BASE}/doi/10.4444/w.1?format=json`))
      ).json()) as DocumentHistory;
      // the expression of concern (2020) outranks the later correction (2021): not "Corrected"
      expect(after.status.code).toBe('expression_of_concern');
      expect(after.events.map((e) => (e.kind === 'notice' ? [e.updateType, e.withdrawn ?? false] : e.kind))).toEqual([
        ['correction', false],
        ['retraction', true],
        ['expression_of_concern', false],
      ]);
      const html = await (await a.handle(new Request(`${BASE}/doi/10.4444/w.1`))).text();
      expect(html).toContain('(no longer listed by this source)');
      expect(html).toContain('<p class="badge">Expression of concern</p>');
    } finally {
      await own.close();
    }
  });
});

describe('details', () => {
  test("a notice's own doi.org link is listed once, whatever its DOI holds (a SICI DOI with : ; < >)", async () => {
    const own = Store.open(`${dir.path}/sici`, 'production', { mapSizeBytes: 1 << 26 });
    try {
      const sici = '10.1002/(SICI)1097-4636(199711)37:2<189::AID-JBM7>3.0.CO;2-D';
      const header = 'Record ID,URLS,RetractionDate,RetractionDOI,OriginalPaperDOI,RetractionNature,Reason';
      async function* csv() {
        yield Buffer.from(
          `${header}\n1,https://rw.example/post;,1/2/2020 0:00,"${sici}",10.4444/sici.1,Retraction,+Error;\n`,
        );
      }
      await importUpdates([own], 'retraction-watch-csv', csv());
      const page = await (
        await makeApp({ production: { store: own } }).handle(new Request(`${BASE}/doi/10.4444/sici.1`))
      ).text();
      expect(page.match(/doi\.org\/10\.1002/g)).toHaveLength(1);
      expect(page).toContain('<li><a class="url" href="https://rw.example/post">https://rw.example/post</a></li>');
    } finally {
      await own.close();
    }
  });

  test('an update type named like a member of every JS object (constructor) is a type like any other: page, JSON and Updates API', async () => {
    const own = Store.open(`${dir.path}/constructor`, 'production', { mapSizeBytes: 1 << 26 });
    try {
      const header = 'Record ID,URLS,RetractionDate,RetractionDOI,OriginalPaperDOI,RetractionNature,Reason';
      async function* csv() {
        yield Buffer.from(`${header}\n1,,3/3/2016 0:00,10.4444/notice.c,10.4444/ctor.1,constructor,+x;\n`);
      }
      await importUpdates([own], 'retraction-watch-csv', csv());
      const a = makeApp({ production: { store: own } });
      const page = await a.handle(new Request(`${BASE}/doi/10.4444/ctor.1`));
      expect(page.status).toBe(200);
      expect(timelineTitles(await page.text())).toEqual(['Constructor']);
      const json = (await (
        await a.handle(new Request(`${BASE}/doi/10.4444/ctor.1?format=json`))
      ).json()) as DocumentHistory;
      expect(json.events.map((e) => (e.kind === 'notice' ? [e.updateType, e.label] : e.kind))).toEqual([
        ['constructor', 'Constructor'],
      ]);
      const [doc] = await documents(await postDois(a, '/v2.2/updates', ['10.4444/ctor.1']));
      expect(doc!.updates.map((u) => u.updateType)).toEqual(['constructor']);
    } finally {
      await own.close();
    }
  });

  test('a link reads as where it goes: a right-to-left override cannot disguise its host, and a URL with a user name is no link', async () => {
    const own = Store.open(`${dir.path}/links`, 'production', { mapSizeBytes: 1 << 26 });
    try {
      const header = 'Record ID,URLS,RetractionDate,RetractionDOI,OriginalPaperDOI,RetractionNature,Reason';
      const rlo = 'https://rw.example/goo\u202egle.com';
      async function* csv() {
        yield Buffer.from(
          `${header}\n1,${rlo};https://doi.org@evil.example/x;,3/3/2016 0:00,10.4444/notice.l,10.4444/links.1,Retraction,+x;\n`,
        );
      }
      await importUpdates([own], 'retraction-watch-csv', csv());
      const page = await (
        await makeApp({ production: { store: own } }).handle(new Request(`${BASE}/doi/10.4444/links.1`))
      ).text();
      expect(page).toContain(
        '<a class="url" href="https://rw.example/goo%E2%80%AEgle.com">https://rw.example/goo%E2%80%AEgle.com</a>',
      );
      expect(page).not.toContain('\u202e');
      expect(page).toContain('<li>https://doi.org@evil.example/x</li>');
      expect(page).not.toContain('href="https://doi.org@evil.example');
    } finally {
      await own.close();
    }
  });

  test('JSON errors carry Vary and nosniff; HEAD of one gives its length without the body', async () => {
    const g = await get('/doi/10.9999/none', { accept: 'application/json' });
    const h = await get('/doi/10.9999/none', { accept: 'application/json' }, 'HEAD');
    const body = await g.text();
    expect(g.status).toBe(404);
    for (const r of [g, h]) {
      expect(r.headers.get('vary')).toBe('accept');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(h.status).toBe(404);
    expect(h.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(await h.text()).toBe('');
  });
});

test('/openapi.json describes the status page and its JSON from the same schema', async () => {
  const doc = (await (await get('/openapi.json')).json()) as {
    paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> } }>;
    components: { schemas: Record<string, unknown> };
  };
  for (const path of ['/doi/{doi}', '/staging/doi/{doi}']) {
    const ok = doc.paths[path]!.get!.responses['200']!.content!;
    expect(ok['application/json']!.schema).toEqual({ $ref: '#/components/schemas/DocumentHistory' });
    expect(ok['text/html']).toBeDefined();
  }
  expect(doc.components.schemas.DocumentHistory).toEqual(JSON.parse(JSON.stringify(DocumentHistory)));
});
