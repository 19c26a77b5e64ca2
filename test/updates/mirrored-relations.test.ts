import { afterEach, beforeEach, expect, test } from 'bun:test';
import { silentLogger } from '../../src/base/log.ts';
import { Store, servedUpdates } from '../../src/store/index.ts';
import { CrossrefHarvest, importUpdates } from '../../src/updates/index.ts';
import { type CrossrefApi, type FakeWork, startCrossrefApi } from '../support/crossref-api.ts';
import { tempDir } from '../support/fixtures.ts';

/**
 * A relation a publisher deposited on both records (the article names its notice in `update-to`, as well as the
 * notice the article), which Crossref mirrors into each record's `updated-by`: both records then name each other
 * both ways. With no Retraction Watch entry to say which is the notice, a record registered long before every
 * date of the relation is the updated work, and the update stands on it. Nothing else is decided by dates: a
 * wrong guess would retract a notice.
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

const entry = (doi: string, updated: number[]) => ({
  DOI: doi,
  type: 'retraction',
  label: 'Retraction',
  source: 'publisher',
  updated: { 'date-parts': [updated] },
});
const created = (parts: number[]) => ({
  'date-parts': [parts],
  'date-time': `${parts.map((p) => String(p).padStart(2, '0')).join('-')}T10:00:00Z`,
});
/**
 * The two records as Crossref serves them: each names the other in update-to and (mirrored) in updated-by. The
 * notice's deposit carries `updated`; the article's wrong-way deposit `wrongWay` (by default the same date).
 */
function pair(
  articleCreated: number[] | undefined,
  noticeCreated: number[] | undefined,
  updated = [2024, 3, 1],
  wrongWay = updated,
): FakeWork[] {
  const registered = (parts: number[] | undefined) => parts && { created: created(parts) };
  return [
    {
      DOI: ARTICLE,
      indexed: '2024-03-02',
      type: 'journal-article',
      ...registered(articleCreated),
      'update-to': [entry(NOTICE, wrongWay)],
      'updated-by': [entry(NOTICE, updated)],
    },
    {
      DOI: NOTICE,
      indexed: '2024-03-02',
      type: 'journal-article',
      ...registered(noticeCreated),
      'update-to': [entry(ARTICLE, updated)],
      'updated-by': [entry(ARTICLE, wrongWay)],
    },
  ];
}
async function* chunks(works: FakeWork[]) {
  yield new TextEncoder().encode(JSON.stringify({ message: { items: works } }));
}
const served = (doi: string) =>
  servedUpdates(store.updatesOf(doi)).map((u) => `${u.updateType} by ${u.updateDoi} on ${u.updateDate}`);

test('harvested: the article registered years before is retracted by the notice; the notice is not retracted', async () => {
  api = await startCrossrefApi({ works: pair([2019, 5, 1], [2024, 2, 28]) });
  const h = new CrossrefHarvest(
    {
      name: 'crossref',
      url: api.url,
      mailto: 'ops@example.org',
      everyMs: 3600_000,
      rows: 100,
      fullEveryMs: 0,
      staleAfterMs: 1e9,
      nice: 0,
      idle: false,
    },
    [store],
    silentLogger,
    { version: 'test', retryBaseMs: 20 },
  );
  const r = await h.run();
  if ('code' in r) throw new Error(r.message);
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
  expect(served(NOTICE)).toEqual([]);
  // the article's wrong-way side is left out, and both of the notice's (undecided), in each of the two passes
  expect(r.skipped).toEqual({ MIRRORED_RELATION: 6 });
});

test('imported as whole records: the same, whichever record comes first', async () => {
  for (const works of [pair([2019, 5, 1], [2024, 3, 1]), pair([2019, 5, 1], [2024, 3, 1]).reverse()]) {
    const r = await importUpdates([store], 'crossref-json', chunks(works));
    if ('code' in r) throw new Error(r.message);
    expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
    expect(served(NOTICE)).toEqual([]);
  }
});

test('an update dated to the month: the article registered months before is told apart; the notice is never decided by dates', async () => {
  for (const noticeCreated of [
    [2024, 3, 3],
    [2024, 3, 20],
  ]) {
    const r = await importUpdates([store], 'crossref-json', chunks(pair([2023, 12, 20], noticeCreated, [2024, 3])));
    if ('code' in r) throw new Error(r.message);
    expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03`]);
    expect(served(NOTICE)).toEqual([]);
    expect(r.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 3 });
  }
});

test('dates that cannot tell (an article updated within 14 days of its registration, a pair registered years after its update, dates missing): both sides go, and no notice is retracted', async () => {
  for (const works of [
    pair([2024, 2, 25], [2024, 3, 1]),
    pair([2005, 6, 1], [2005, 6, 1], [1998, 4, 1]),
    pair(undefined, undefined),
  ]) {
    const r = await importUpdates([store], 'crossref-json', chunks(works));
    if ('code' in r) throw new Error(r.message);
    expect(r.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 4 });
    expect(served(ARTICLE)).toEqual([]);
    expect(served(NOTICE)).toEqual([]);
  }
});

test('a notice pre-registered long before its update, beside an article whose wrong-way deposit carries its own date (as the Lancet article does), is not retracted', async () => {
  const r = await importUpdates(
    [store],
    'crossref-json',
    chunks(pair([2019, 5, 1], [2024, 1, 2], [2024, 3, 1], [2019, 5, 1])),
  );
  if ('code' in r) throw new Error(r.message);
  expect(served(NOTICE)).toEqual([]);
  // the article is decided by the notice's deposit (its updated-by), whatever date its own wrong-way entry carries
  expect(served(ARTICLE)).toEqual([`retraction by ${NOTICE} on 2024-03-01`]);
  // the Lancet pattern, an erratum 8 days after the article: nothing decided, nothing false
  const lancet = await importUpdates(
    [store],
    'crossref-json',
    chunks(pair([2020, 5, 22], [2020, 5, 30], [2020, 5, 30], [2020, 5, 22])),
  );
  if ('code' in lancet) throw new Error(lancet.message);
  expect(served(NOTICE)).toEqual([]);
});
