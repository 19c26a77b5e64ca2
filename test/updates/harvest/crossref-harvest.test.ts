import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import type { Fault } from '../../../src/base/fault.ts';
import { silentLogger } from '../../../src/base/log.ts';
import type { CrossrefHarvestSettings } from '../../../src/config/index.ts';
import { Store, servedUpdates } from '../../../src/store/index.ts';
import { CrossrefHarvest, importUpdates, loadState, type WindowFigures } from '../../../src/updates/index.ts';
import {
  type CrossrefApi,
  type CrossrefApiOptions,
  type FakeWork,
  realWorks,
  startCrossrefApi,
  syntheticWorks,
} from '../../support/crossref-api.ts';
import { tempDir } from '../../support/fixtures.ts';

/** The Crossref harvest (src/updates/harvest/) against the loopback Crossref REST API, into real stores. */

const ARTICLE = '10.1016/s0140-6736(20)31180-6';
const NOTICE = '10.1016/s0140-6736(20)31324-6';
const TODAY = new Date().toISOString().slice(0, 10);

let dir: ReturnType<typeof tempDir>;
let store: Store;
let api: CrossrefApi | undefined;
beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
});
afterEach(async () => {
  await api?.stop();
  api = undefined;
  await store.close();
  dir.remove();
});

async function serve(works: FakeWork[], opts: CrossrefApiOptions = {}): Promise<CrossrefApi> {
  api = await startCrossrefApi({ works, ...opts });
  return api;
}
function harvester(
  a: CrossrefApi,
  settings: Partial<CrossrefHarvestSettings> = {},
  stores: Store[] = [store],
): CrossrefHarvest {
  const s: CrossrefHarvestSettings = {
    name: 'crossref',
    url: a.url,
    mailto: 'ops@example.org',
    everyMs: 3600_000,
    rows: 100,
    fullEveryMs: 0,
    staleAfterMs: 1e9,
    nice: 0,
    idle: false,
    ...settings,
  };
  return new CrossrefHarvest(s, stores, silentLogger, { version: 'test', retryBaseMs: 20 });
}
async function ok(r: Promise<WindowFigures | Fault>): Promise<WindowFigures> {
  const v = await r;
  if ('code' in v) throw new Error(`${v.code}: ${v.message}`);
  return v;
}
const served = (doi: string, s: Store = store) => servedUpdates(s.updatesOf(doi.toLowerCase()));
/** every work's served updates, for comparing two stores */
function everything(s: Store, works: FakeWork[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const w of works) {
    for (const doi of [w.DOI, ...((w['update-to'] ?? []) as { DOI: string }[]).map((e) => e.DOI)])
      out[doi.toLowerCase()] = served(doi, s);
  }
  return out;
}
const cursors = (a: CrossrefApi) => a.calls.map((c) => c.params.get('cursor'));

describe('a window', () => {
  test('the real records: the retracted article is served with its retraction notice, once per notice and source', async () => {
    const a = await serve(realWorks());
    const r = await ok(harvester(a).run());
    expect(r).toMatchObject({ until: TODAY, works: 4, full: true }); // the first harvest reads everything: a full one
    const article = served(ARTICLE);
    const retraction = article.filter((u) => u.updateDoi === NOTICE && u.updateType === 'retraction');
    expect(retraction).toEqual([
      {
        updateDoi: NOTICE,
        source: 'retraction-watch',
        updateType: 'retraction',
        updateDate: '2020-06-05',
        reasons: [],
        urls: [`https://doi.org/${NOTICE}`],
      },
    ]);
    expect(article.map((u) => [u.source, u.updateType, u.updateDoi])).toContainEqual([
      'retraction-watch',
      'expression_of_concern',
      '10.1016/s0140-6736(20)31290-3',
    ]);
    // one update per (source, notice, type): the notice's update-to and the article's updated-by name the same one
    const ids = article.map((u) => `${u.source} ${u.updateDoi} ${u.updateType}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('cursor paging to the end: every work of both passes, mailto and select on every call', async () => {
    const works = syntheticWorks(1_050);
    const a = await serve(works);
    const r = await ok(harvester(a).run());
    expect(r.works).toBe(1_050);
    expect(r.used).toBe(1_050);
    for (const w of works.filter((_, i) => i % 2 === 1)) expect(served(w.DOI)).toHaveLength(1);
    expect(a.calls.every((c) => c.params.get('mailto') === 'ops@example.org' && c.params.get('rows') === '100')).toBe(
      true,
    );
    expect(new Set(a.calls.map((c) => c.params.get('select')))).toEqual(new Set(['DOI,created,update-to,updated-by']));
    expect(a.calls[0]!.params.get('filter')).toBe(`until-index-date:${TODAY},is-update:true`);
    expect(a.calls[0]!.headers.get('user-agent')).toContain('mailto:ops@example.org');
    expect(cursors(a).filter((c) => c === '*')).toHaveLength(2);
    expect(loadState(store, 'crossref')).toMatchObject({ reached: TODAY, window: undefined });
  });

  test('the next run asks from-index-date of the day the last one reached; a withdrawn Crossmark update disappears', async () => {
    const works = syntheticWorks(20, { days: ['2024-05-01'] });
    const a = await serve(works);
    await ok(harvester(a, { from: '2024-01-01' }).run());
    expect(a.calls[0]!.params.get('filter')).toBe(
      `from-index-date:2024-01-01,until-index-date:${TODAY},is-update:true`,
    );
    const target = works[1]!;
    expect(served(target.DOI)).toHaveLength(1);
    // Crossref re-indexes the work without its update: its updated-by is now empty
    works[1] = { ...target, indexed: TODAY, 'updated-by': [] };
    works[0] = { ...works[0]!, indexed: TODAY, 'update-to': [] };
    a.calls.length = 0;
    const r = await ok(harvester(a, { from: '2024-01-01' }).run());
    expect(a.calls[0]!.params.get('filter')).toBe(`from-index-date:${TODAY},until-index-date:${TODAY},is-update:true`);
    expect(r.applied.production!.updatesWithdrawn).toBe(0); // the fake's has-update filter no longer selects it ...
    // ... so a work whose last update went is only seen by a full harvest, which replaces the whole feed
    const full = await ok(harvester(a, { from: '2024-01-01' }).run({ full: true }));
    expect(full.applied.production!.updatesWithdrawn).toBe(1);
    expect(served(target.DOI)).toEqual([]);
  });

  test('a full window that would withdraw over half of the feed is refused whole, and not tried again every run', async () => {
    const works = syntheticWorks(400, { days: ['2024-05-01'] });
    const a = await serve(works);
    const h = harvester(a, { fullEveryMs: 86_400_000 });
    const day = Date.now();
    await ok(h.run({ now: () => day }));
    const all = [...works];
    const before = everything(store, all);
    a.works.splice(0, a.works.length, ...all.slice(0, 100)); // an API answering with a quarter of the works
    const refused = await h.run({ full: true, now: () => day + 1000 });
    expect(refused).toMatchObject({ code: 'SNAPSHOT_SHRINK' });
    expect(everything(store, all)).toEqual(before);
    expect(loadState(store, 'crossref')).toMatchObject({
      lastFullAt: day + 1000,
      lastError: { code: 'SNAPSHOT_SHRINK' },
      window: undefined,
    });
    expect((await ok(h.run({ now: () => day + 2000 }))).full).toBe(false);
    expect(
      (await ok(h.run({ full: true, allowShrink: true, now: () => day + 3000 }))).applied.production!.updatesWithdrawn,
    ).toBe(150);
  });

  test('a scheduled run is full once the last full one is older than fullEveryMs', async () => {
    const a = await serve(syntheticWorks(10));
    const h = harvester(a, { fullEveryMs: 86_400_000 });
    const day = Date.now();
    expect((await ok(h.run({ now: () => day }))).full).toBe(true);
    expect((await ok(h.run({ now: () => day + 3600_000 }))).full).toBe(false);
    expect((await ok(h.run({ now: () => day + 86_400_000 + 1 }))).full).toBe(true);
    expect(loadState(store, 'crossref').lastFullAt).toBe(day + 86_400_000 + 1);
  });

  test('a notice read alone adds its update and keeps the work updates from other notices', async () => {
    const works = syntheticWorks(2, { days: ['2024-05-01'] });
    const a = await serve(works);
    await ok(harvester(a).run());
    const target = works[1]!.DOI;
    a.works.splice(0, a.works.length, {
      DOI: '10.5555/notice.late',
      indexed: TODAY,
      'update-to': [
        { DOI: target, type: 'correction', source: 'publisher', updated: { 'date-parts': [[2025, 1, 2]] } },
      ],
    });
    await ok(harvester(a).run());
    expect(served(target).map((u) => [u.source, u.updateType, u.updateDoi])).toEqual([
      ['retraction-watch', expect.any(String), '10.5555/harvest.0'],
      ['crossref', 'correction', '10.5555/notice.late'],
    ]);
  });

  test('every configured environment gets the window', async () => {
    const staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
    try {
      const works = syntheticWorks(300);
      const a = await serve(works);
      await ok(harvester(a, {}, [store, staging]).run());
      expect(everything(staging, works)).toEqual(everything(store, works));
      expect(served(works[1]!.DOI, staging)).toHaveLength(1);
    } finally {
      await staging.close();
    }
  });
});

describe('one update per notice across sources', () => {
  const HEADER =
    'Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes';
  const csvRow = (record: string, notice: string) =>
    `${record},Hydroxychloroquine,,,The Lancet,Elsevier,,,https://retractionwatch.com/x;,Research Article;,6/4/2020 0:00,${notice},0,5/22/2020 0:00,${ARTICLE},0,Retraction,+Concerns/Issues About Data;+Investigation by Journal/Publisher;,No,`;
  async function importCsv(rows: string[]): Promise<void> {
    const r = await importUpdates(
      [store],
      'retraction-watch-csv',
      (async function* () {
        yield Buffer.from(`${HEADER}\n${rows.join('\n')}\n`);
      })(),
    );
    if ('code' in r) throw new Error(r.message);
  }
  const rwRetractions = () =>
    served(ARTICLE).filter((u) => u.source === 'retraction-watch' && u.updateType === 'retraction');

  test("the Retraction Watch CSV and Crossref's retraction-watch entry are one update: the CSV's reasons, Crossref's notice DOI", async () => {
    // the CSV has no notice DOI for this record ("unavailable"): only the Record ID ties the two together
    await importCsv([csvRow('23529', 'unavailable')]);
    expect(rwRetractions()).toEqual([
      expect.objectContaining({
        updateDoi: null,
        reasons: ['Concerns/Issues About Data', 'Investigation by Journal/Publisher'],
      }),
    ]);
    await ok(harvester(await serve(realWorks())).run());
    expect(rwRetractions()).toEqual([
      {
        updateDoi: NOTICE,
        source: 'retraction-watch',
        updateType: 'retraction',
        updateDate: '2020-06-04',
        reasons: ['Concerns/Issues About Data', 'Investigation by Journal/Publisher'],
        urls: ['https://retractionwatch.com/x', `https://doi.org/${NOTICE}`],
      },
    ]);
    // either feed alone withdrawing it leaves the other's view served
    await importCsv([csvRow('99999', '10.9999/other.notice')]);
    expect(rwRetractions().map((u) => [u.updateDoi, u.updateDate, u.reasons.length])).toEqual([
      ['10.9999/other.notice', '2020-06-04', 2],
      [NOTICE, '2020-06-05', 0],
    ]);
  });

  test('with the notice DOI on both sides, the same update is joined whichever arrived first', async () => {
    await ok(harvester(await serve(realWorks())).run());
    await importCsv([csvRow('23529', NOTICE)]);
    expect(rwRetractions()).toHaveLength(1);
    expect(rwRetractions()[0]!.reasons).toHaveLength(2);
  });
});

describe('faults', () => {
  test('429 with Retry-After: the page is asked again no sooner than the server said', async () => {
    const a = await serve(syntheticWorks(250));
    a.inject({ kind: 'status', status: 429, retryAfter: '1', times: 1 });
    await ok(harvester(a).run());
    const [limited, next] = a.calls;
    expect(limited!.status).toBe(429);
    expect(next!.at - limited!.at).toBeGreaterThanOrEqual(950);
    expect(served(syntheticWorks(250)[1]!.DOI)).toHaveLength(1);
  });

  test('503s are tried again with growing waits; the window commits whole', async () => {
    const works = syntheticWorks(250);
    const a = await serve(works);
    a.inject({ kind: 'status', status: 503, times: 3 });
    const r = await ok(harvester(a).run());
    expect(a.calls.slice(0, 3).map((c) => c.status)).toEqual([503, 503, 503]);
    expect(r.works).toBe(250);
  });

  // Crossref does not document the answer: 400 naming the cursor (the fake's default), or 404 "Resource not found."
  test.each([
    ['400 naming the cursor', 'named', 400],
    ['404 "Resource not found."', 'not-found', 404],
  ] as const)(
    'an expired cursor answered %s restarts the window, nothing counted twice; the same answer to cursor=* is an error',
    async (_, reply, status) => {
      const works = syntheticWorks(500);
      const a = await serve(works, { expiredCursor: reply });
      let pages = 0;
      const r = await ok(
        harvester(a).run({
          onProgress: () => {
            if (++pages === 2) a.inject({ kind: 'expire-cursors' });
          },
        }),
      );
      expect(a.calls.some((c) => c.status === status)).toBe(true);
      expect(cursors(a).filter((c) => c === '*').length).toBe(3); // notices, notices again, then updated
      expect(r.works).toBe(500);
      expect(r.applied.production!.updatesAdded).toBe(250);
      // the same status to a walk's first call is not a cursor's: the run fails, the window kept
      a.inject({ kind: 'status', status, times: 1 });
      const failed = await harvester(a).run();
      expect(failed).toMatchObject({ code: 'HARVEST_HTTP_ERROR' });
      expect((failed as Fault).message).toContain(`HTTP ${status}`);
    },
  );

  test('a 400 validation failure of another parameter on a later page is an error, not an expired cursor', async () => {
    const a = await serve(syntheticWorks(500));
    let pages = 0;
    const body = JSON.stringify({
      status: 'failed',
      'message-type': 'validation-failure',
      message: [{ type: 'parameter-not-allowed', value: 'rows', message: 'This route does not support rows' }],
    });
    const failed = await harvester(a).run({
      onProgress: () => {
        if (++pages === 2) a.inject({ kind: 'status', status: 400, body, times: 1 });
      },
    });
    expect(failed).toMatchObject({ code: 'HARVEST_HTTP_ERROR' });
    expect((failed as Fault).message).toContain('This route does not support rows');
    expect(cursors(a).filter((c) => c === '*').length).toBe(1); // not restarted
  });

  test('a truncated page: nothing of the window is applied until it is read whole; a lost page restarts the window', async () => {
    const works = syntheticWorks(500);
    const a = await serve(works);
    await ok(harvester(a).run());
    const before = everything(store, works);
    // Crossref re-indexes every work today; one of them gained a correction
    works.forEach((w, i) => (works[i] = { ...w, indexed: TODAY }));
    const extra = {
      DOI: '10.5555/late.correction',
      type: 'correction',
      source: 'publisher',
      updated: { 'date-parts': [[2025, 2, 3]] },
    };
    works[3] = { ...works[3]!, 'updated-by': [...(works[3]!['updated-by'] as unknown[]), extra] };
    // every page is cut off: the run gives up, the window is kept, the store is as it was
    a.inject({ kind: 'truncate', times: 1_000 });
    const failed = await harvester(a).run();
    expect(failed).toMatchObject({ code: 'HARVEST_BAD_PAGE' });
    expect((failed as Fault).message).toContain('gave up after 8 tries');
    expect(everything(store, works)).toEqual(before);
    expect(loadState(store, 'crossref')).toMatchObject({
      lastError: { code: 'HARVEST_BAD_PAGE' },
      window: { pass: 0, cursor: '*' },
    });
    // one cut-off page while the server moves its scroll cursor on: the walk misses works and starts again
    a.clearFaults();
    a.calls.length = 0;
    let pages = 0;
    const r = await ok(
      harvester(a).run({ onProgress: () => ++pages === 1 && a.inject({ kind: 'truncate', times: 1 }) }),
    );
    expect(cursors(a).filter((c) => c === '*').length).toBe(3); // the notices walk lost a page and ran again
    expect(r.works).toBe(500);
    expect(served(works[3]!.DOI).map((u) => u.updateDoi)).toEqual(['10.5555/harvest.2', '10.5555/late.correction']);
    expect(loadState(store, 'crossref').lastError).toBeUndefined();
  });

  test('advertised rate limits are kept: no 429, never more calls in a second than the limit', async () => {
    const a = await serve(syntheticWorks(1_000), { rateLimit: { limit: 5, intervalSeconds: 1, concurrency: 1 } });
    await ok(harvester(a).run());
    expect(a.calls.filter((c) => c.status === 429)).toEqual([]);
    const at = a.calls.map((c) => c.at);
    const most = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 1000).length));
    expect(a.calls.length).toBeGreaterThanOrEqual(10);
    expect(most).toBeLessThanOrEqual(5);
  });
});
