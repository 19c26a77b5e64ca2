import { describe, expect, test } from 'bun:test';
import { Store } from '../../../src/store/index.ts';
import { type ImportResult, importUpdates as importOrFault } from '../../../src/updates/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { storePerTest } from '../../support/temp-store.ts';

/** Update imports stream through the store's scratch space and swap in one transaction (src/store/updates/feed-import.ts). */

const HEADER =
  'Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes';
const row = (id: number, doi: string, notice: string) =>
  `${id},T,,,J,P,,A,,Research Article;,1/2/2020 0:00,${notice},0,1/1/2019 0:00,${doi},0,Retraction,+Fake Peer Review;,No,`;
const csv = (rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
async function* chunks(text: string, failAfter?: number) {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 100) {
    if (failAfter !== undefined && i >= failAfter) throw new Error('connection reset by peer');
    yield bytes.subarray(i, i + 100);
  }
}
/** the import's result; a refusal fails the test with its message */
async function importUpdates(...args: Parameters<typeof importOrFault>): Promise<ImportResult> {
  const r = await importOrFault(...args);
  if ('code' in r) throw new Error(`${r.code}: ${r.message}`);
  return r;
}
const scratchRows = (s: Store) => s.importScratchRows();

const temp = storePerTest();

test('a 12,000-row feed (several scratch batches) is applied whole and leaves no scratch rows', async () => {
  const rows = Array.from({ length: 12_000 }, (_, i) => row(i, `10.5555/w${i % 11_000}`, `10.5555/n${i}`));
  const r = await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv(rows)));
  expect(r.parsed.works).toBe(11_000);
  expect(r.applied.production!.updatesAdded).toBe(12_000);
  expect(temp.store.updatesOf('10.5555/w5')!.updates).toHaveLength(2);
  expect(temp.store.updatesOf('10.5555/w10999')!.updates).toHaveLength(1);
  expect(scratchRows(temp.store)).toBe(0);
});

test('a source failing part-way applies nothing, keeps the earlier data and leaves no scratch rows', async () => {
  await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv([row(1, '10.5555/old', '10.5555/n1')])));
  const rows = Array.from({ length: 5_000 }, (_, i) => row(i, `10.5555/new${i}`, `10.5555/m${i}`));
  const text = csv(rows);
  await expect(
    importUpdates([temp.store], 'retraction-watch-csv', chunks(text, Math.floor(text.length * 0.8))),
  ).rejects.toThrow('connection reset');
  expect(temp.store.updatesOf('10.5555/old')!.updates).toHaveLength(1);
  expect(temp.store.updatesOf('10.5555/new1')).toBeUndefined();
  expect(scratchRows(temp.store)).toBe(0);
});

test('two imports of different feeds into one store at the same time keep their rows apart', async () => {
  const a = importUpdates(
    [temp.store],
    'retraction-watch-csv',
    chunks(csv(Array.from({ length: 3_000 }, (_, i) => row(i, `10.5555/a${i}`, `10.5555/an${i}`)))),
  );
  const crossref = {
    items: [
      {
        DOI: '10.5555/notice',
        type: 'journal-article',
        'update-to': [{ DOI: '10.5555/a7', type: 'retraction', updated: { 'date-parts': [[2021, 3, 4]] } }],
      },
    ],
  };
  const b = importUpdates([temp.store], 'crossref-json', chunks(JSON.stringify(crossref)));
  const [ra, rb] = await Promise.all([a, b]);
  expect(ra.applied.production!.updatesAdded).toBe(3_000);
  expect(rb.applied.production!.updatesAdded).toBe(1);
  const sources = temp.store
    .updatesOf('10.5555/a7')!
    .updates.map((u) => u.source)
    .sort();
  expect(sources).toEqual(['crossref', 'retraction-watch']);
  expect(scratchRows(temp.store)).toBe(0);
});

test('scratch rows of an import that died long ago are removed by the next import', async () => {
  // an import started 7 hours ago that wrote a row and never committed (its process died)
  const dead = temp.store.beginUpdatesImport('crossref-json', 'works', Date.now() - 7 * 3600_000);
  dead.add('10.5555/x', {
    doi: '10.5555/x',
    update: {
      updateDoi: null,
      source: 'crossref',
      updateType: 'retraction',
      updateDate: '2020',
      reasons: [],
      urls: [],
    },
  });
  await dead.flush();
  expect(scratchRows(temp.store)).toBe(1);
  await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv([row(1, '10.5555/y', '10.5555/n1')])));
  await temp.store.flushed();
  expect(scratchRows(temp.store)).toBe(0);
  expect(temp.store.updatesOf('10.5555/x')).toBeUndefined();
});

test('an import resumed more than 6 hours after it began keeps its own rows (a harvest window resumed late)', async () => {
  const started = Date.now() - 7 * 3600_000;
  const first = temp.store.beginUpdatesImport('crossref-json', 'works', started);
  const update = {
    updateDoi: '10.5555/n',
    source: 'crossref',
    updateType: 'retraction',
    updateDate: '2020',
    reasons: [],
    urls: [],
  };
  first.add('10.5555/w', { doi: '10.5555/w', update });
  await first.flush();
  const resumed = temp.store.beginUpdatesImport('crossref-json', 'works', Date.now(), {
    id: first.importId,
    rows: first.rowsAdded,
  });
  await temp.store.flushed();
  expect(resumed.scratchRows()).toBe(1);
  const r = await resumed.commit();
  expect('code' in r ? r.code : r.updatesAdded).toBe(1);
  expect(temp.store.updatesOf('10.5555/w')?.updates).toHaveLength(1);
});

describe('a snapshot that would withdraw more than half of the feed is refused', () => {
  const full = Array.from({ length: 400 }, (_, i) => row(i, `10.5555/s${i}`, `10.5555/sn${i}`));

  test('a header-only or cut-down file changes nothing and says why; --allow-shrink applies it', async () => {
    await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv(full)));
    const refused = await importOrFault([temp.store], 'retraction-watch-csv', chunks(csv(full.slice(0, 150))));
    expect('code' in refused && refused.code).toBe('SNAPSHOT_SHRINK');
    expect((refused as { message: string }).message).toContain("would withdraw 250 of the feed's 400 stored updates");
    expect(temp.store.updatesOf('10.5555/s399')!.updates).toHaveLength(1);
    expect(scratchRows(temp.store)).toBe(0);
    const headerOnly = await importOrFault([temp.store], 'retraction-watch-csv', chunks(csv([])));
    expect('code' in headerOnly && headerOnly.code).toBe('SNAPSHOT_SHRINK');

    const allowed = await importUpdates(
      [temp.store],
      'retraction-watch-csv',
      chunks(csv(full.slice(0, 150))),
      undefined,
      {
        allowShrink: true,
      },
    );
    expect(allowed.applied.production!.updatesWithdrawn).toBe(250);
    expect(temp.store.updatesOf('10.5555/s399')!.updates).toHaveLength(0);
  });

  test('withdrawing up to half is an ordinary re-import', async () => {
    await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv(full)));
    const r = await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv(full.slice(0, 200))));
    expect(r.applied.production!.updatesWithdrawn).toBe(200);
  });

  test('a refusal in one environment leaves every environment as it was', async () => {
    const other = tempDir();
    const staging = Store.open(other.path, 'staging', { mapSizeBytes: 1 << 30 });
    try {
      await importUpdates([temp.store, staging], 'retraction-watch-csv', chunks(csv(full)));
      const refused = await importOrFault(
        [temp.store, staging],
        'retraction-watch-csv',
        chunks(csv(full.slice(0, 10))),
      );
      expect('code' in refused && refused.code).toBe('SNAPSHOT_SHRINK');
      expect(staging.updatesOf('10.5555/s399')!.updates).toHaveLength(1);
      expect(scratchRows(staging)).toBe(0);
    } finally {
      await staging.close();
      other.remove();
    }
  });
});

test('a refusal in staging after production would have taken the file: neither takes it (each is asked first)', async () => {
  const other = tempDir();
  const staging = Store.open(other.path, 'staging', { mapSizeBytes: 1 << 30 });
  const rows = Array.from({ length: 300 }, (_, i) => row(i, `10.5555/d${i}`, `10.5555/dn${i}`));
  try {
    await importUpdates([temp.store], 'retraction-watch-csv', chunks(csv(rows.slice(0, 100))));
    await importUpdates([staging], 'retraction-watch-csv', chunks(csv(rows)));
    const refused = await importOrFault([temp.store, staging], 'retraction-watch-csv', chunks(csv(rows.slice(0, 10))));
    expect('code' in refused && refused.code).toBe('SNAPSHOT_SHRINK');
    expect('code' in refused && refused.message).toStartWith('production: ');
    // rows 50-149: production (0-99 stored) would withdraw half and add 50; staging would withdraw 200 of 300
    const moved = await importOrFault([temp.store, staging], 'retraction-watch-csv', chunks(csv(rows.slice(50, 150))));
    expect('code' in moved && moved.message).toStartWith('staging: ');
    expect(temp.store.updatesOf('10.5555/d0')!.updates).toHaveLength(1);
    expect(temp.store.updatesOf('10.5555/d120')).toBeUndefined();
    expect(staging.updatesOf('10.5555/d299')!.updates).toHaveLength(1);
    expect([scratchRows(temp.store), scratchRows(staging)]).toEqual([0, 0]);
  } finally {
    await staging.close();
    other.remove();
  }
});
