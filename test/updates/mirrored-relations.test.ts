import { afterEach, beforeEach, expect, test } from 'bun:test';
import { servedUpdates, Store } from '../../src/store/index.ts';
import { CrossrefHarvest, importUpdates } from '../../src/updates/index.ts';
import { silentLogger } from '../../src/log.ts';
import { startCrossrefApi, type CrossrefApi, type FakeWork } from '../support/crossref-api.ts';
import { tempDir } from '../support/fixtures.ts';

/**
 * A relation a publisher deposited on both records (the article names its notice in `update-to`, as well as the
 * notice the article), which Crossref mirrors into each record's `updated-by`: both records then name each other
 * both ways. With no Retraction Watch entry to say which is the notice, the records' registration dates do; the
 * update must not be lost.
 */

const ARTICLE = '10.5555/article.a';
const NOTICE = '10.5555/notice.n';

let dir: ReturnType<typeof tempDir>;
let store: Store;
let api: CrossrefApi | undefined;
beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
});
afterEach(async () => {
  await api?.stop();
  api = undefined;
  await store.close();
  dir.remove();
});

const entry = (doi: string, updated: number[]) => ({ DOI: doi, type: 'retraction', label: 'Retraction', source: 'publisher', updated: { 'date-parts': [updated] } });
const created = (parts: number[]) => ({ 'date-parts': [parts], 'date-time': `${parts.map((p) => String(p).padStart(2, '0')).join('-')}T10:00:00Z` });
/** the two records as Crossref serves them: each names the other in update-to and (mirrored) in updated-by */
function pair(articleCreated: number[], noticeCreated: number[] | undefined, updated = [2024, 3, 1]): FakeWork[] {
  return [
    { DOI: ARTICLE, indexed: '2024-03-02', type: 'journal-article', created: created(articleCreated), 'update-to': [entry(NOTICE, updated)], 'updated-by': [entry(NOTICE, updated)] },
    { DOI: NOTICE, indexed: '2024-03-02', type: 'journal-article', ...(noticeCreated && { created: created(noticeCreated) }), 'update-to': [entry(ARTICLE, updated)], 'updated-by': [entry(ARTICLE, updated)] },
  ];
}
async function* chunks(works: FakeWork[]) {
  yield new TextEncoder().encode(JSON.stringify({ message: { items: works } }));
}
const served = (doi: string) => servedUpdates(store.updatesOf(doi)).map((u) => `${u.updateType} by ${u.updateDoi} on ${u.updateDate}`);

test('harvested: the article registered years before is retracted by the notice; the notice is not retracted', async () => {
  api = await startCrossrefApi({ works: pair([2019, 5, 1], [2024, 2, 28]) });
  const h = new CrossrefHarvest({ name: 'crossref', url: api.url, mailto: 'ops@example.org', everyMs: 3600_000, rows: 100, fullEveryMs: 0, staleAfterMs: 1e9, nice: 0, idle: false }, [store], silentLogger, { version: 'test', retryBaseMs: 20 });
  const r = await h.run();
  if ('code' in r) throw new Error(r.message);
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
  expect(served(NOTICE)).toEqual([]);
  // each record's wrong-way side is left out, and counted
  expect(r.skipped).toEqual({ MIRRORED_RELATION: 4 });
});

test('imported as whole records: the same, whichever record comes first', async () => {
  for (const works of [pair([2019, 5, 1], [2024, 3, 1]), pair([2019, 5, 1], [2024, 3, 1]).reverse()]) {
    const r = await importUpdates([store], 'crossref-json', chunks(works));
    if ('code' in r) throw new Error(r.message);
    expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
    expect(served(NOTICE)).toEqual([]);
  }
});

test("an update dated to the month: the article registered months before is told apart; the notice, whose update may be dated more than 14 days after it was registered, is undecided and its sides left out", async () => {
  const r = await importUpdates([store], 'crossref-json', chunks(pair([2023, 12, 20], [2024, 3, 3], [2024, 3])));
  if ('code' in r) throw new Error(r.message);
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03`]);
  expect(served(NOTICE)).toEqual([]);
  expect(r.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 3 });
  // registered in the update's last days, the notice is decided too
  const late = await importUpdates([store], 'crossref-json', chunks(pair([2023, 12, 20], [2024, 3, 20], [2024, 3])));
  if ('code' in late) throw new Error(late.message);
  expect(late.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 2 });
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03`]);
  expect(served(NOTICE)).toEqual([]);
});

test('an article retracted within days of its registration: both records look like notices, and the update is kept (on both)', async () => {
  const r = await importUpdates([store], 'crossref-json', chunks(pair([2024, 2, 25], [2024, 3, 1])));
  if ('code' in r) throw new Error(r.message);
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
  expect(served(NOTICE)).toEqual([`retraction by ${ARTICLE} on 2024-03-01`]);
});

test('with no registration date on the notice, which way is unknown there: the article still says it', async () => {
  const r = await importUpdates([store], 'crossref-json', chunks(pair([2019, 5, 1], undefined)));
  if ('code' in r) throw new Error(r.message);
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
  expect(served(NOTICE)).toEqual([]);
  expect(r.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 3 });
});
