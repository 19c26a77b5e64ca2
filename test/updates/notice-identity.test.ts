import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { open } from 'lmdb';
import { doiKey } from '../../src/doi/index.ts';
import { documentStatus, historyOf } from '../../src/history/index.ts';
import { META } from '../../src/store/environment/environment.ts';
import { Store, servedUpdates } from '../../src/store/index.ts';
import { importUpdates, type UpdateObject } from '../../src/updates/index.ts';
import { NOTICE_WORK_FILE, RETRACTED_WORK_FILE } from '../support/crossref-works.ts';
import { tempDir } from '../support/fixtures.ts';
import { importCsvRows, importUpdatedBy, RW_CSV_HEAD, rwRelay } from '../support/update-imports.ts';

/**
 * One notice, served once (docs/interface.md, "Updates API"): copies of a notice are one when their notice DOIs
 * are the same DOI (ASCII case aside) or when feeds name it by the same Retraction Watch Record ID; the status
 * page shows no ghost of a copy another copy still answers; the badge does not depend on the order of notices.
 */

const W = '10.5555/work.n';
let dir: ReturnType<typeof tempDir>;
let store: Store;

beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

async function* bytes(text: string) {
  yield Buffer.from(text);
}
const HEAD = RW_CSV_HEAD;
const csv = (rows: string[]) => importCsvRows(store, rows);
const crossref = (updatedBy: object[]) => importUpdatedBy(store, W, updatedBy);
/** What the Updates API serves: the table its handler reads. */
function served(): UpdateObject[] {
  store.updatesIndex.refresh(true);
  const b = store.updatesIndex.table().get(doiKey(W));
  return b ? JSON.parse(new TextDecoder().decode(b)) : [];
}
function page() {
  const h = historyOf(store, doiKey(W))!;
  const mark = (e: { withdrawn?: boolean; reclassified?: { updateType: string } }) =>
    e.withdrawn ? ' (no longer listed)' : e.reclassified ? ` (re-classified as ${e.reclassified.updateType})` : '';
  return {
    status: h.status.code,
    notices: h.events.flatMap((e) => (e.kind === 'notice' ? [`${e.noticeDoi}${mark(e)}`] : [])),
  };
}
const relay = (doi: string, recordId?: string, type = 'retraction', date = [2015, 2, 2]) =>
  rwRelay(doi, recordId, type, date);
const kinds = () => served().map((u) => `${u.updateType} ${u.updateDoi}`);

describe('one notice, served once', () => {
  test('two feeds naming one notice by different Record IDs but the same notice DOI and type', async () => {
    await csv([`1,${W},10.5555/n1,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`]);
    await crossref([relay('10.5555/n1', '2')]);
    expect(served().map((u) => [u.updateDoi, u.reasons])).toEqual([['10.5555/n1', ['Plagiarism']]]);
  });

  test('notice DOIs that differ only in ASCII case, across feeds and within one', async () => {
    await csv([`1,${W},10.5555/ABC,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`]);
    await crossref([relay('10.5555/abc')]);
    expect(served()).toHaveLength(1);
    expect(page().notices).toHaveLength(1);
    await csv([`1,${W},10.5555/ABC,2/2/2015 0:00,Retraction,,`, `2,${W},10.5555/abc,2/2/2015 0:00,Retraction,,`]);
    expect(store.updatesOf(doiKey(W))!.updates.filter((u) => u.origin === 'retraction-watch-csv')).toHaveLength(1);
  });
});

describe('Retraction Watch records without a notice DOI', () => {
  test('two records of one work, both "unavailable", one nature: two notices, each served', async () => {
    await csv([
      `100,${W},unavailable,2/2/2015 0:00,Correction,+Error in Data;,`,
      `101,${W},unavailable,6/7/2019 0:00,Correction,+Error in Methods;,`,
    ]);
    expect(served().map((u) => [u.updateDate, u.reasons])).toEqual([
      ['2015-02-02', ['Error in Data']],
      ['2019-06-07', ['Error in Methods']],
    ]);
    // imported again: nothing changes, and one record gone is withdrawn alone
    await csv([
      `100,${W},unavailable,2/2/2015 0:00,Correction,+Error in Data;,`,
      `101,${W},unavailable,6/7/2019 0:00,Correction,+Error in Methods;,`,
    ]);
    expect(served()).toHaveLength(2);
    await csv([`101,${W},unavailable,6/7/2019 0:00,Correction,+Error in Methods;,`]);
    expect(served().map((u) => u.updateDate)).toEqual(['2019-06-07']);
    expect(page().notices).toEqual(['null', 'null (no longer listed)']);
  });
});

test('a copy without a notice DOI stored before its Record ID was known is the same notice when the Record ID comes', async () => {
  const noIds = 'OriginalPaperDOI,RetractionDOI,RetractionDate,RetractionNature,Reason,URLS';
  const r0 = await importUpdates(
    [store],
    'retraction-watch-csv',
    bytes(`${noIds}\n${W},unavailable,2/2/2015 0:00,Correction,+Error in Data;,\n`),
    undefined,
    { allowShrink: true },
  );
  if ('code' in r0) throw new Error(r0.message);
  expect(store.updatesOf(doiKey(W))!.updates[0]!.recordId).toBeUndefined();
  const head = store.changeFeed.head().commit;
  const r1 = await importUpdates(
    [store],
    'retraction-watch-csv',
    bytes(`${[HEAD, `100,${W},unavailable,2/2/2015 0:00,Correction,+Error in Data;,`].join('\n')}\n`),
  );
  if ('code' in r1) throw new Error(r1.message);
  expect(r1.applied.production).toMatchObject({ updatesAdded: 0, updatesWithdrawn: 0, updatesUnchanged: 1 });
  expect(store.updatesOf(doiKey(W))!.updates[0]!.recordId).toBe('100');
  expect(page().notices).toEqual(['null']);
  expect(store.changeFeed.head().commit).toBe(head);
});

describe('two updates of one feed stay two, whatever another feed says', () => {
  const rw = [`1,${W},10.5555/n1,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`];

  test("another feed's copy of one record under the Record ID of the other", async () => {
    await csv([...rw, `2,${W},10.5555/n2,3/3/2016 0:00,Correction,,`]);
    await crossref([relay('10.5555/n1', '2')]);
    expect(kinds()).toEqual(['retraction 10.5555/n1', 'correction 10.5555/n2']);
  });

  test('another feed that gives a record an older nature', async () => {
    await csv([...rw, `2,${W},10.5555/n1,3/3/2016 0:00,Expression of concern,,`]);
    await crossref([relay('10.5555/n1', '1', 'expression_of_concern', [2016, 3, 3])]);
    expect(kinds().sort()).toEqual(['expression_of_concern 10.5555/n1', 'retraction 10.5555/n1']);
  });

  test("a record whose nature the CSV gives otherwise than another feed's relay: the CSV speaks for its own records", async () => {
    // Retraction Watch's file says expression of concern for record 7; Crossref relays it as a retraction
    await csv([`7,${W},10.5555/eoc,1/10/2023 0:00,Expression of concern,+Concerns about data;,http://rw/7`]);
    await crossref([relay('10.5555/ret', '7', 'retraction', [2024, 2, 1])]);
    expect(kinds()).toEqual(['expression_of_concern 10.5555/eoc']);
    expect(page()).toEqual({
      status: 'expression_of_concern',
      notices: ['10.5555/ret (re-classified as expression_of_concern)', '10.5555/eoc'],
    });
    // once the file lists the retraction too, it stands
    await csv([`7,${W},10.5555/ret,2/1/2024 0:00,Retraction,+Concerns about data;,http://rw/7`]);
    expect(kinds()).toEqual(['retraction 10.5555/ret']);
    expect(page().status).toBe('retracted');
  });

  test('two updates of one feed under one Record ID, with the other feed imported after them and again', async () => {
    const relays = [relay('10.5555/n1', '1'), relay('10.5555/n2', '1', 'correction', [2016, 3, 3])];
    await crossref(relays);
    // one record, one nature: the relay's later assertion until the CSV lists the record
    expect(kinds()).toEqual(['correction 10.5555/n2']);
    await csv(rw);
    expect(kinds()).toEqual(['retraction 10.5555/n1']);
    await csv([`9,10.5555/other,10.5555/x,2/2/2015 0:00,Retraction,,`]); // rw withdrawn from W
    expect(kinds()).toEqual(['correction 10.5555/n2']);
    await csv(rw);
    await crossref(relays);
    expect(kinds()).toEqual(['retraction 10.5555/n1']);
  });
});

describe('the status page shows no ghost of a notice still served', () => {
  test('a re-import that spells the notice DOI in another case', async () => {
    await csv([`1,${W},10.5555/ABC,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`]);
    await csv([`1,${W},10.5555/abc,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`]);
    expect(page()).toEqual({ status: 'retracted', notices: ['10.5555/abc'] });
  });

  test("one feed withdraws its copy while another feed's copy (same Record ID, no notice DOI) still stands", async () => {
    await csv([`1,${W},unavailable,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`]);
    await crossref([relay('10.5555/abc', '1')]);
    expect(page()).toEqual({ status: 'retracted', notices: ['10.5555/abc'] });
    await crossref([]);
    expect(page()).toEqual({ status: 'retracted', notices: ['null'] });
    expect(served()).toHaveLength(1);
  });

  test('a record whose nature changed: the old nature is shown re-classified, not as a notice still standing', async () => {
    await csv([`1,${W},10.5555/n1,2/2/2015 0:00,Retraction,,`]);
    await csv([`1,${W},10.5555/n1,2/2/2015 0:00,Expression of concern,,`]);
    expect(page()).toEqual({
      status: 'expression_of_concern',
      notices: ['10.5555/n1 (re-classified as expression_of_concern)', '10.5555/n1'],
    });
  });

  test('a notice no feed lists any more is still shown, marked', async () => {
    await csv([
      `1,${W},10.5555/n1,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`,
      `2,${W},10.5555/n2,3/3/2016 0:00,Correction,,`,
    ]);
    await csv([`2,${W},10.5555/n2,3/3/2016 0:00,Correction,,`]);
    expect(page()).toEqual({ status: 'corrected', notices: ['10.5555/n2', '10.5555/n1 (no longer listed)'] });
  });
});

describe('the badge does not depend on the order notices come in', () => {
  const u = (updateType: string, updateDate: string): UpdateObject => ({
    updateDoi: `10.5555/${updateType}`,
    source: 'retraction-watch',
    updateType,
    updateDate,
    reasons: [],
    urls: [],
  });
  const permutations = <T>(xs: T[]): T[][] =>
    xs.length <= 1
      ? [xs]
      : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));

  test('every order of notices whose dates chain (2020, 2020-04, 2020-05) gives one answer', () => {
    const codes = new Set(
      permutations([u('reinstatement', '2020-04'), u('retraction', '2020'), u('correction', '2020-05')]).map(
        (p) => documentStatus(p).code,
      ),
    );
    expect(codes.size).toBe(1);
  });

  test('a notice with a coarse date does not blur the clear order of finer ones', () => {
    const concern = (d: string) => ({ ...u('expression_of_concern', d), source: 'crossref' });
    for (const p of permutations([u('reinstatement', '2020-03-10'), u('retraction', '2020-11-02'), concern('2020')]))
      expect(documentStatus(p).code).toBe('retracted');
    for (const p of permutations([u('reinstatement', '2020-05-14'), u('retraction', '2020-05-20'), concern('2020-05')]))
      expect(documentStatus(p).code).toBe('retracted');
  });

  test('a notice that decides nothing does not join months into one date', () => {
    for (const p of permutations([u('retraction', '2020-03'), u('reinstatement', '2020-02'), u('addendum', '2020')]))
      expect(documentStatus(p).code).toBe('retracted');
  });
});

test('a store whose rows older rules rendered is rendered again when opened, as one commit of the works whose list differs', async () => {
  await csv([
    `1,${W},10.5555/n1,2/2/2015 0:00,Retraction,+Plagiarism;,http://rw/1`,
    `5,10.5555/unchanged,10.5555/n5,2/2/2015 0:00,Retraction,,`,
  ]);
  await crossref([relay('10.5555/n1', '2')]);
  const good = served();
  const unchangedSeq = store.updatesOf('10.5555/unchanged')!.changeSeq;
  // as a program of the older rules left it: the notice twice in the work's row, and no rules mark
  await store.close();
  const env = open({ path: `${dir.path}/production/data.mdb`, noSubdir: true, maxDbs: 12 });
  const [meta, changes] = [
    env.openDB({ name: 'meta', encoding: 'msgpack' }),
    env.openDB({ name: 'changes', keyEncoding: 'uint32', encoding: 'msgpack' }),
  ];
  const [seq, row] = [...changes.getRange()].map(({ key, value }) => [key, value] as [number, unknown[]]).at(-1)!;
  const doubled = JSON.stringify([...good, { ...good[0]!, reasons: [] }]);
  await changes.put(seq, [row[0], row[1], row[2], `{"doi":${JSON.stringify(W)},"updates":${doubled}}`, 1]);
  await meta.remove(META.servedRules);
  const headBefore = meta.get(META.changeFeed) as { commit: number };
  await env.close();

  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  expect(served()).toEqual(good);
  expect(store.changeFeed.head().commit).toBe(headBefore.commit + 1);
  const all = store.changeFeed.changesAfter(undefined, 10);
  expect('items' in all && all.items.map((i) => (JSON.parse(i) as { updates: unknown[] }).updates.length)).toEqual([
    1, 1,
  ]);
  expect(store.updatesOf('10.5555/unchanged')!.changeSeq).toBe(unchangedSeq!);
  expect(store.updatesOf(doiKey(W))!.changeSeq).toBeGreaterThan(unchangedSeq!);
  // opened again, nothing is rendered again
  await store.close();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  expect(store.changeFeed.head().commit).toBe(headBefore.commit + 1);
});

describe('Crossref files as Crossref writes them', () => {
  test('a work named again without updated-by (Crossref leaves it out when none are left) has none from the file', async () => {
    await crossref([relay('10.5555/n1')]);
    expect(served()).toHaveLength(1);
    // a record cut down by a `select` says nothing of updated-by: nothing withdrawn
    const partial = await importUpdates(
      [store],
      'crossref-json',
      bytes(JSON.stringify({ message: { DOI: W, 'update-to': [] } })),
    );
    if ('code' in partial) throw new Error(partial.message);
    expect(served()).toHaveLength(1);
    const whole = {
      DOI: W,
      type: 'journal-article',
      indexed: { 'date-time': '2026-11-01T00:00:00Z' },
      title: ['A work'],
    };
    const r = await importUpdates([store], 'crossref-json', bytes(JSON.stringify({ message: whole })));
    if ('code' in r) throw new Error(r.message);
    expect(served()).toEqual([]);
    expect(r.applied.production).toMatchObject({ updatesWithdrawn: 1 });
  });

  test("a notice's record as Crossref serves it (its update-to mirrored in updated-by, no Retraction Watch entry) retracts nothing of its own", async () => {
    const article = '10.1016/s0140-6736(20)31180-6';
    const entry = { DOI: article, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2020, 6, 4]] } };
    const noticeRecord = {
      DOI: '10.1016/s0140-6736(20)31174-0',
      type: 'journal-article',
      indexed: {},
      'update-to': [entry],
      'updated-by': [entry],
    };
    const r = await importUpdates([store], 'crossref-json', bytes(JSON.stringify({ message: noticeRecord })));
    if ('code' in r) throw new Error(r.message);
    expect(r.parsed.report.skipped).toEqual({ MIRRORED_RELATION: 2 });
    expect(servedUpdates(store.updatesOf('10.1016/s0140-6736(20)31174-0'))).toEqual([]);
  });

  test('the Lancet article and its notice, which deposit their relation both ways: the article is retracted, the notice is not', async () => {
    for (const file of [RETRACTED_WORK_FILE, NOTICE_WORK_FILE]) {
      const r = await importUpdates([store], 'crossref-json', bytes(readFileSync(file, 'utf8')));
      if ('code' in r) throw new Error(r.message);
      expect(r.parsed.report.skipped.MIRRORED_RELATION).toBeGreaterThan(0);
    }
    const of = (doi: string) =>
      servedUpdates(store.updatesOf(doiKey(doi))).map((u) => `${u.source} ${u.updateType} ${u.updateDoi}`);
    expect(of('10.1016/s0140-6736(20)31180-6')).toContain('retraction-watch retraction 10.1016/s0140-6736(20)31324-6');
    for (const notice of [
      '10.1016/s0140-6736(20)31324-6',
      '10.1016/s0140-6736(20)31174-0',
      '10.1016/s0140-6736(20)31290-3',
      '10.1016/s0140-6736(20)31528-2',
    ])
      expect(of(notice).filter((u) => u.includes('retraction'))).toEqual([]);
  });

  test('an update dated by a timestamp out of the range of dates is skipped BAD_DATE, not thrown', async () => {
    const r = await importUpdates(
      [store],
      'crossref-json',
      bytes(
        JSON.stringify({
          message: { DOI: W, 'updated-by': [{ DOI: '10.5555/n1', type: 'retraction', updated: { timestamp: 9e15 } }] },
        }),
      ),
    );
    if ('code' in r) throw new Error(r.message);
    expect(r.parsed.report.skipped).toEqual({ BAD_DATE: 1 });
  });
});
