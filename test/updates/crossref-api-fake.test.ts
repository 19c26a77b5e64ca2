import { afterEach, describe, expect, test } from 'bun:test';
import {
  type CrossrefApi,
  type CrossrefApiOptions,
  type FakeWork,
  realWorks,
  startCrossrefApi,
  syntheticWorks,
} from '../support/crossref-api.ts';
import { NOTICE_WORK_FILE, RETRACTED_WORK_FILE, readFixtureMessage } from '../support/crossref-works.ts';

/** The fake Crossref REST API (test/support/crossref-api.ts), driven through plain fetch. */

let api: CrossrefApi | undefined;
afterEach(async () => {
  await api?.stop();
  api = undefined;
});

async function start(opts: CrossrefApiOptions = {}): Promise<CrossrefApi> {
  api = await startCrossrefApi(opts);
  return api;
}

interface Got {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}
async function get(a: CrossrefApi, query: string, path = '/works'): Promise<Got> {
  const res = await fetch(`${a.url}${path}?${query}`);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Walks a cursor to its empty page; returns every page's message. */
async function walk(a: CrossrefApi, query: string): Promise<any[]> {
  const pages: any[] = [];
  let cursor = '*';
  for (;;) {
    const r = await get(a, `${query}&cursor=${encodeURIComponent(cursor)}`);
    expect(r.status).toBe(200);
    pages.push(r.json.message);
    if (r.json.message.items.length === 0) return pages;
    cursor = r.json.message['next-cursor'];
  }
}
const dois = (pages: any[]) => pages.flatMap((p) => p.items.map((i: any) => i.DOI as string));

describe('the real Crossref fixtures', () => {
  test('the retracted article carries updated-by from retraction-watch (with record-id) and from the publisher', () => {
    const work = readFixtureMessage(RETRACTED_WORK_FILE) as any;
    expect(work.DOI).toBe('10.1016/s0140-6736(20)31180-6');
    expect(work.indexed).toEqual({
      'date-parts': [[2026, 9, 22]],
      'date-time': '2026-09-22T05:15:18Z',
      timestamp: 1790054118532,
      version: '4.0.1',
    });
    const rw = work['updated-by'].filter((u: any) => u.source === 'retraction-watch');
    expect(rw.map((u: any) => [u.type, u.DOI, u['record-id']])).toEqual([
      ['expression_of_concern', '10.1016/s0140-6736(20)31290-3', '23527'],
      ['correction', '10.1016/s0140-6736(20)31249-6', '23528'],
      ['retraction', '10.1016/s0140-6736(20)31324-6', '23529'],
    ]);
    expect(work['updated-by'].filter((u: any) => u.source === 'publisher')).toHaveLength(4);
    expect(work['update-to']).toHaveLength(4);
  });

  test('the notice carries update-to for the article (retraction-watch record 23529) and realWorks() serves both', () => {
    const notice = readFixtureMessage(NOTICE_WORK_FILE) as any;
    expect(notice.DOI).toBe('10.1016/s0140-6736(20)31324-6');
    expect(notice['update-to'][0]).toMatchObject({
      DOI: '10.1016/s0140-6736(20)31180-6',
      type: 'retraction',
      source: 'retraction-watch',
      'record-id': '23529',
    });
    expect(notice['updated-by']).toHaveLength(1);
    expect(realWorks().map((w) => [w.DOI, w.indexed])).toEqual([
      ['10.1016/s0140-6736(20)31180-6', '2026-09-22'],
      ['10.1016/s0140-6736(20)31324-6', '2026-09-23'],
    ]);
  });

  test('synthetic works pair a notice (update-to) with a work (updated-by) under one record-id', () => {
    const [notice, work] = syntheticWorks(2, { days: ['2024-01-02'] });
    expect(notice['update-to']).toEqual([
      expect.objectContaining({ DOI: '10.5555/harvest.1', source: 'retraction-watch', 'record-id': '100000' }),
    ]);
    expect(work['updated-by']).toEqual([expect.objectContaining({ DOI: '10.5555/harvest.0', 'record-id': '100000' })]);
    expect(work).toMatchObject({
      DOI: '10.5555/harvest.1',
      indexed: '2024-01-02',
      publisher: 'Elsevier BV',
      type: 'journal-article',
    });
  });
});

describe('GET /works', () => {
  test('a cursor walk returns every match once, in the real reply shape, and ends with an empty page', async () => {
    const a = await start({ works: syntheticWorks(2500) });
    const pages = await walk(a, 'rows=1000&mailto=test%40example.org');
    expect(pages.map((p) => p.items.length)).toEqual([1000, 1000, 500, 0]);
    expect(new Set(dois(pages)).size).toBe(2500);
    expect(dois(pages)).toEqual(a.works.map((w) => w.DOI).sort());
    expect(Object.keys(pages[0])).toEqual([
      'facets',
      'next-cursor',
      'total-results',
      'items',
      'items-per-page',
      'query',
    ]);
    expect(pages.every((p) => p['total-results'] === 2500 && p['next-cursor'] === pages[0]['next-cursor'])).toBe(true);
    const item = pages[0].items.find((i: any) => i.DOI === '10.5555/harvest.0');
    const day = a.works[0].indexed;
    expect(item.indexed).toMatchObject({
      'date-parts': [day.split('-').map(Number)],
      'date-time': `${day}T00:00:00Z`,
      timestamp: Date.parse(day),
    });
    const r = await get(a, 'rows=1');
    expect([
      r.headers.get('x-rate-limit-limit'),
      r.headers.get('x-rate-limit-interval'),
      r.headers.get('x-concurrency-limit'),
    ]).toEqual(['1000', '1s', '50']);
    expect(r.json).toMatchObject({
      status: 'ok',
      'message-type': 'work-list',
      'message-version': '1.0.0',
      message: { 'items-per-page': 1 },
    });
    expect(r.json.message['next-cursor']).toBeUndefined();
    expect(a.calls[0].params.get('mailto')).toBe('test@example.org');
  });

  test('index-date bounds are inclusive; is-update and has-update select notices and updated works; filters combine', async () => {
    const works = syntheticWorks(300, { days: ['2024-05-01', '2024-05-02', '2024-05-03'] });
    const a = await start({ works: [...works, ...realWorks()] });
    const count = async (filter: string) => (await get(a, `rows=0&filter=${filter}`)).json.message['total-results'];
    const on = (day: string) => works.filter((w) => w.indexed === day).length;
    expect(await count('from-index-date:2024-05-02,until-index-date:2024-05-02')).toBe(on('2024-05-02'));
    expect(await count('from-index-date:2024-05-02')).toBe(300 - on('2024-05-01') + 2);
    expect(await count('until-index-date:2024-05-02')).toBe(on('2024-05-01') + on('2024-05-02'));
    expect(await count('from-index-date:2024-05,until-index-date:2024')).toBe(300);
    expect(await count('from-index-date:2026-09-23')).toBe(1);
    // Both real records carry update-to and updated-by (the retracted article has the publisher's update-to too).
    expect(await count('is-update:true')).toBe(152);
    expect(await count('is-update:false')).toBe(150);
    expect(await count('has-update:true')).toBe(152);
    expect(await count('has-update:f')).toBe(150);
    expect(await count('is-update:true,has-update:true')).toBe(2);
    expect(await count('is-update:true,from-index-date:2024-05-03')).toBe(
      works.filter((w, i) => i % 2 === 0 && w.indexed === '2024-05-03').length + 2,
    );
    expect(await count('is-update:true,is-update:false')).toBe(302);
    expect(await count('from-index-date:2026-09-22,from-index-date:2024-05-03')).toBe(on('2024-05-03') + 2);
  });

  test('select keeps only the named fields', async () => {
    const a = await start({ works: syntheticWorks(4) });
    const { items } = (await get(a, 'select=DOI,indexed,updated-by&rows=4')).json.message;
    expect(items.map((i: any) => Object.keys(i))).toEqual([
      ['DOI', 'indexed'],
      ['DOI', 'indexed', 'updated-by'],
      ['DOI', 'indexed'],
      ['DOI', 'indexed', 'updated-by'],
    ]);
    expect(items[0].indexed['date-parts']).toHaveLength(1);
  });

  test('rows over the maximum, a bad number, a bad date and an unknown filter answer 400 as Crossref does', async () => {
    const a = await start({ maxRows: 1000 });
    const rows = await get(a, 'rows=1001');
    expect(rows.status).toBe(400);
    expect(rows.json).toEqual({
      status: 'failed',
      'message-type': 'validation-failure',
      message: [
        {
          type: 'integer-not-valid',
          value: '1001',
          message: 'Integer specified as 1001 but must be a positive integer less than or equal to 1000. ',
        },
      ],
    });
    expect((await get(a, 'rows=ten')).status).toBe(400);
    expect((await get(a, 'filter=from-index-date:yesterday')).json.message[0].type).toBe('date-not-valid');
    const unknown = await get(a, 'filter=from-update-date:2024-01-01&cursor=*');
    expect(unknown.status).toBe(400);
    expect(unknown.json.message[0]).toMatchObject({ type: 'filter-not-available', value: 'from-update-date' });
    expect(unknown.headers.get('x-rate-limit-limit')).toBe('1000');
    const other = await get(a, '', '/members');
    expect([other.status, other.text]).toEqual([404, 'Resource not found.']);
  });
});

describe('limits and faults', () => {
  test('more calls than the limit in the interval answer 429 with Retry-After: 1, and are recorded', async () => {
    const a = await start({ rateLimit: { limit: 3, intervalSeconds: 1, concurrency: 10 } });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await get(a, 'rows=1')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await get(a, 'rows=1');
    expect([
      limited.headers.get('retry-after'),
      limited.headers.get('x-rate-limit-limit'),
      limited.headers.get('x-rate-limit-interval'),
    ]).toEqual(['1', '3', '1s']);
    expect(a.calls.map((c) => c.status)).toEqual([200, 200, 200, 429, 429, 429]);
    await Bun.sleep(1050);
    expect((await get(a, 'rows=1')).status).toBe(200);
  });

  test('more calls at once than the concurrency limit answer 429; maxInFlight counts the most at once', async () => {
    const a = await start({ rateLimit: { limit: 100, intervalSeconds: 1, concurrency: 2 } });
    a.inject({ kind: 'stall', ms: 300, times: 2 });
    const first = [get(a, 'rows=1'), get(a, 'rows=1')];
    await Bun.sleep(100);
    const third = await get(a, 'rows=1');
    expect([third.status, third.headers.get('retry-after'), third.headers.get('x-concurrency-limit')]).toEqual([
      429,
      '1',
      '2',
    ]);
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    expect(a.maxInFlight).toBe(2);
  });

  test('a status fault answers the next calls with that status and its Retry-After', async () => {
    const a = await start();
    a.inject({ kind: 'status', status: 503, retryAfter: '7', times: 2 });
    a.inject({ kind: 'status', status: 500, times: 1 });
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await get(a, 'rows=1'));
    expect(got.map((r) => [r.status, r.headers.get('retry-after')])).toEqual([
      [503, '7'],
      [503, '7'],
      [500, null],
      [200, null],
    ]);
  });

  test('expire-cursors (and an unused cursor past its lifetime) makes a cursor answer 400; a new walk works', async () => {
    const a = await start({ works: syntheticWorks(10), cursorTtlMs: 200 });
    const first = await get(a, 'rows=2&cursor=*');
    const cursor = encodeURIComponent(first.json.message['next-cursor']);
    expect((await get(a, `rows=2&cursor=${cursor}`)).status).toBe(200);
    a.inject({ kind: 'expire-cursors' });
    const expired = await get(a, `rows=2&cursor=${cursor}`);
    expect(expired.status).toBe(400);
    expect(expired.json).toMatchObject({ status: 'failed', 'message-type': 'validation-failure' });
    const again = await get(a, 'rows=2&cursor=*');
    expect(again.json.message.items).toHaveLength(2);
    await Bun.sleep(300);
    expect((await get(a, `rows=2&cursor=${encodeURIComponent(again.json.message['next-cursor'])}`)).status).toBe(400);
  });

  test('a truncated reply is a 200 whose JSON ends early; the walk has moved on past the lost page', async () => {
    const a = await start({ works: syntheticWorks(6) });
    const first = await get(a, 'rows=2&cursor=*');
    const cursor = encodeURIComponent(first.json.message['next-cursor']);
    a.inject({ kind: 'truncate', times: 1 });
    const cut = await get(a, `rows=2&cursor=${cursor}`);
    expect([cut.status, cut.json]).toEqual([200, undefined]);
    expect(cut.text.startsWith('{"status":"ok"')).toBe(true);
    const retry = await get(a, `rows=2&cursor=${cursor}`);
    expect(retry.json.message.items.map((i: any) => i.DOI)).toEqual(['10.5555/harvest.4', '10.5555/harvest.5']);
  });

  test("with cursors: 'stateless' each page has its own cursor and retrying one repeats its page", async () => {
    const a = await start({ works: syntheticWorks(6), cursors: 'stateless' });
    const first = await get(a, 'rows=2&cursor=*');
    const cursor = encodeURIComponent(first.json.message['next-cursor']);
    a.inject({ kind: 'truncate', times: 1 });
    expect((await get(a, `rows=2&cursor=${cursor}`)).json).toBeUndefined();
    const retry = await get(a, `rows=2&cursor=${cursor}`);
    expect(retry.json.message.items.map((i: any) => i.DOI)).toEqual(['10.5555/harvest.2', '10.5555/harvest.3']);
    expect(retry.json.message['next-cursor']).not.toBe(first.json.message['next-cursor']);
  });

  test('a stall delays the next replies', async () => {
    const a = await start();
    a.inject({ kind: 'stall', ms: 250, times: 1 });
    const t = performance.now();
    expect((await get(a, 'rows=1')).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(240);
    // one stall only: the next reply is not held (a lower bound is all a test may say of time)
    expect((await get(a, 'rows=1')).status).toBe(200);
  });

  test('a walk pages the snapshot taken at cursor=*; edits between walks are seen by the next walk', async () => {
    const a = await start({ works: syntheticWorks(4, { days: ['2024-05-01'] }) });
    const first = await get(a, 'rows=2&cursor=*&filter=from-index-date:2024-05-01');
    a.works.push({ DOI: '10.5555/harvest.9', indexed: '2024-05-01' });
    a.works[3].indexed = '2024-04-30';
    a.works[0]['update-to'] = [];
    const rest = await get(a, `rows=2&cursor=${encodeURIComponent(first.json.message['next-cursor'])}`);
    expect(rest.json.message.items.map((i: any) => [i.DOI, i.indexed['date-parts'][0][2]])).toEqual([
      ['10.5555/harvest.2', 1],
      ['10.5555/harvest.3', 30],
    ]);
    const again = await walk(a, 'rows=10&filter=from-index-date:2024-05-01');
    expect(dois(again)).toEqual(['10.5555/harvest.0', '10.5555/harvest.1', '10.5555/harvest.2', '10.5555/harvest.9']);
    expect(again[0].items[0]['update-to']).toEqual([]);
  });

  test('a walk of 50,000 works in pages of 1000 returns each once (speed is measured by bench/harvest.ts, not here)', async () => {
    const works: FakeWork[] = syntheticWorks(50_000);
    const a = await start({ works });
    const pages = await walk(a, 'rows=1000');
    expect(dois(pages)).toHaveLength(50_000);
    expect(new Set(dois(pages)).size).toBe(50_000);
  });
});
