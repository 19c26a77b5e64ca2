import { afterEach, beforeEach, expect, test } from 'bun:test';
import { importUpdates } from '../../src/ingest/index.ts';
import { Store } from '../../src/store/index.ts';
import { tempDir } from '../support/fixtures.ts';

/** Update imports stream through the store's scratch space and swap in one transaction (updates-import.ts). */

const HEADER = 'Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes';
const row = (id: number, doi: string, notice: string) => `${id},T,,,J,P,,A,,Research Article;,1/2/2020 0:00,${notice},0,1/1/2019 0:00,${doi},0,Retraction,+Fake Peer Review;,No,`;
const csv = (rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
async function* chunks(text: string, failAfter?: number) {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 100) {
    if (failAfter !== undefined && i >= failAfter) throw new Error('connection reset by peer');
    yield bytes.subarray(i, i + 100);
  }
}
const scratchRows = (s: Store) => [...s.dbs.importScratch.getKeys()].length;

let dir: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

test('a 12,000-row feed (several scratch batches) is applied whole and leaves no scratch rows', async () => {
  const rows = Array.from({ length: 12_000 }, (_, i) => row(i, `10.5555/w${i % 11_000}`, `10.5555/n${i}`));
  const r = await importUpdates([store], 'retraction-watch-csv', chunks(csv(rows)));
  expect(r.parsed.works).toBe(11_000);
  expect(r.applied.production!.updatesAdded).toBe(12_000);
  expect(store.updatesOf('10.5555/w5')!.updates).toHaveLength(2);
  expect(store.updatesOf('10.5555/w10999')!.updates).toHaveLength(1);
  expect(scratchRows(store)).toBe(0);
});

test('a source failing part-way applies nothing, keeps the earlier data and leaves no scratch rows', async () => {
  await importUpdates([store], 'retraction-watch-csv', chunks(csv([row(1, '10.5555/old', '10.5555/n1')])));
  const rows = Array.from({ length: 5_000 }, (_, i) => row(i, `10.5555/new${i}`, `10.5555/m${i}`));
  const text = csv(rows);
  await expect(importUpdates([store], 'retraction-watch-csv', chunks(text, Math.floor(text.length * 0.8)))).rejects.toThrow('connection reset');
  expect(store.updatesOf('10.5555/old')!.updates).toHaveLength(1);
  expect(store.updatesOf('10.5555/new1')).toBeUndefined();
  expect(scratchRows(store)).toBe(0);
});

test('two imports of different feeds into one store at the same time keep their rows apart', async () => {
  const a = importUpdates([store], 'retraction-watch-csv', chunks(csv(Array.from({ length: 3_000 }, (_, i) => row(i, `10.5555/a${i}`, `10.5555/an${i}`)))));
  const crossref = { items: [{ DOI: '10.5555/notice', type: 'journal-article', 'update-to': [{ DOI: '10.5555/a7', type: 'retraction', updated: { 'date-parts': [[2021, 3, 4]] } }] }] };
  const b = importUpdates([store], 'crossref-json', chunks(JSON.stringify(crossref)));
  const [ra, rb] = await Promise.all([a, b]);
  expect(ra.applied.production!.updatesAdded).toBe(3_000);
  expect(rb.applied.production!.updatesAdded).toBe(1);
  const sources = store.updatesOf('10.5555/a7')!.updates.map((u) => u.source).sort();
  expect(sources).toEqual(['crossref', 'retraction-watch']);
  expect(scratchRows(store)).toBe(0);
});

test('scratch rows of an import that died long ago are removed by the next import', async () => {
  const stale = Buffer.from(`${(Date.now() - 7 * 3600_000).toString(36).padStart(10, '0')}.dead\u000010.5555/x\u0000\u0000\u0000\u0000\u0001`);
  await store.dbs.root.transaction(() => store.dbs.importScratch.putSync(stale, { doi: '10.5555/x', update: {} }));
  expect(scratchRows(store)).toBe(1);
  await importUpdates([store], 'retraction-watch-csv', chunks(csv([row(1, '10.5555/y', '10.5555/n1')])));
  await store.flushed();
  expect(scratchRows(store)).toBe(0);
  expect(store.updatesOf('10.5555/x')).toBeUndefined();
});
