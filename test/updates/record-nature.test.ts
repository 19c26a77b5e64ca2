import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { open } from 'lmdb';
import { doiKey } from '../../src/doi/index.ts';
import type { DocumentHistory } from '../../src/history/index.ts';
import type { App } from '../../src/http/index.ts';
import { META } from '../../src/store/environment/environment.ts';
import { Store } from '../../src/store/index.ts';
import type { UpdateObject } from '../../src/updates/index.ts';
import { BASE, documents, makeApp, post, postDois } from '../http/http-support.ts';
import { tempDir } from '../support/fixtures.ts';
import { importCsvRows, importUpdatedBy, rwRelay } from '../support/update-imports.ts';

/**
 * One Retraction Watch record, one current nature (docs/design.md, "One update per notice"). Crossref appends a
 * second `updated-by` entry with the same Record ID when Retraction Watch re-classifies a record, and keeps the
 * old one: a corrected article must not be shown as retracted. Each case is read where integrators and readers
 * read it: the Updates API, the Entitlement Object's `updates`, the change feed, the private lookup, and the
 * status page (its JSON, its badge and its timeline).
 */

let dir: ReturnType<typeof tempDir>;
let store: Store;
let app: App;

beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  app = makeApp({ production: { store } });
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

const csv = (rows: string[]) => importCsvRows(store, rows);
const crossref = (work: string, updatedBy: object[]) => importUpdatedBy(store, work, updatedBy);
const relay = rwRelay;

/** What the Updates API answers for the work, as `type notice date` lines. */
async function updatesApi(work: string): Promise<string[]> {
  store.updatesIndex.refresh(true);
  const [doc] = await documents(await postDois(app, '/v2.2/updates', [work]));
  return doc!.updates.map(line);
}
const line = (u: UpdateObject) => `${u.updateType} ${u.updateDoi} ${u.updateDate}`;

/** The Entitlement Object's `updates` for the work (an integrator with the updates feature). */
async function entitlementUpdates(work: string): Promise<string[]> {
  const r = await post(app, '/v2.2/entitlements', JSON.stringify({ dois: [work] }));
  expect(r.status).toBe(200);
  const { entitlements } = (await r.json()) as { entitlements: { updates?: UpdateObject[] }[] };
  return (entitlements[0]!.updates ?? []).map(line);
}

/** The work's list in a full sync of the change feed (the latest item that names it). */
async function changeFeed(work: string): Promise<string[] | undefined> {
  const r = await app.handle(
    new Request(`${BASE}/v2.2/updates/changes`, { headers: { 'x-api-key': 'key-with-updates-0001' } }),
  );
  expect(r.status).toBe(200);
  const page = (await r.json()) as { changes: { doi: string; updates: UpdateObject[] }[] };
  return page.changes
    .filter((c) => doiKey(c.doi) === doiKey(work))
    .at(-1)
    ?.updates.map(line);
}

/** The work's list as the private lookup gives it (by its hash prefix). */
async function privateLookup(work: string): Promise<string[]> {
  const list = (await (
    await app.handle(
      new Request(`${BASE}/v2.2/updates/prefixes`, { headers: { 'x-api-key': 'key-with-updates-0001' } }),
    )
  ).json()) as { prefixLength: number };
  const hash = createHash('sha256').update(doiKey(work)).digest('hex');
  const r = await post(
    app,
    '/v2.2/updates/by-prefix',
    JSON.stringify({ prefixes: [hash.slice(0, list.prefixLength)] }),
  );
  expect(r.status).toBe(200);
  const { works } = (await r.json()) as { works: { hash: string; updates: UpdateObject[] }[] };
  return works.find((w) => w.hash === hash)?.updates.map(line) ?? [];
}

/** The status page: its JSON (status and notices, newest first) and the badge its HTML shows. */
async function statusPage(work: string) {
  const json = (await (
    await app.handle(new Request(`${BASE}/doi/${work}`, { headers: { accept: 'application/json' } }))
  ).json()) as DocumentHistory;
  const page = await (
    await app.handle(new Request(`${BASE}/doi/${work}`, { headers: { accept: 'text/html' } }))
  ).text();
  const badge = /<p class="badge">([^<]*)<\/p>/.exec(page)?.[1];
  const notices = json.events.flatMap((e) =>
    e.kind !== 'notice'
      ? []
      : [
          `${e.updateType} ${e.noticeDoi}${e.reclassified ? ` (re-classified as ${e.reclassified.updateType} on ${e.reclassified.date})` : ''}${e.withdrawn ? ' (no longer listed)' : ''}`,
        ],
  );
  return { status: json.status.code, badge, notices, page };
}

/** Every reader of the served lists gives `expected` for the work. */
async function servedEverywhere(work: string, expected: string[]): Promise<void> {
  expect(await updatesApi(work)).toEqual(expected);
  expect(await entitlementUpdates(work)).toEqual(expected);
  expect(await changeFeed(work)).toEqual(expected);
  expect(await privateLookup(work)).toEqual(expected);
}

describe('a retraction re-classified as a correction', () => {
  const WORK = '10.5555/cr.1';
  const crossrefBoth = () =>
    crossref(WORK, [
      relay('10.5555/notice.cr1', '990010', 'retraction', [2020, 6, 1]),
      relay('10.5555/notice.cr1', '990010', 'correction', [2021, 5, 1]),
    ]);

  test('with the Retraction Watch CSV listing it as a correction: corrected, the retraction shown as replaced', async () => {
    await csv([`990010,${WORK},10.5555/notice.cr1,5/1/2021 0:00,Correction,+Error in Data;,http://rw/990010`]);
    await crossrefBoth();
    await servedEverywhere(WORK, ['correction 10.5555/notice.cr1 2021-05-01']);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['corrected', 'Corrected']);
    expect(s.notices).toEqual([
      'correction 10.5555/notice.cr1',
      'retraction 10.5555/notice.cr1 (re-classified as correction on 2021-05-01)',
    ]);
    expect(s.page).toContain(
      'Replaced: re-classified as a correction on <time datetime="2021-05-01">2021-05-01</time>',
    );
  });

  test('relayed by Crossref alone: the later assertion is the nature', async () => {
    const W2 = '10.5555/cr.2';
    await crossref(W2, [
      relay('10.5555/notice.cr2', '990011', 'retraction', [2020, 6, 1]),
      relay('10.5555/notice.cr2', '990011', 'correction', [2021, 5, 1]),
    ]);
    await servedEverywhere(W2, ['correction 10.5555/notice.cr2 2021-05-01']);
    const s = await statusPage(W2);
    expect([s.status, s.badge]).toEqual(['corrected', 'Corrected']);
    expect(s.notices).toEqual([
      'correction 10.5555/notice.cr2',
      'retraction 10.5555/notice.cr2 (re-classified as correction on 2021-05-01)',
    ]);
  });

  test('Crossref giving the entries newest first reads the same: the date decides, not the order', async () => {
    await crossref(WORK, [
      relay('10.5555/notice.cr1', '990010', 'correction', [2021, 5, 1]),
      relay('10.5555/notice.cr1', '990010', 'retraction', [2020, 6, 1]),
    ]);
    await servedEverywhere(WORK, ['correction 10.5555/notice.cr1 2021-05-01']);
  });

  test('on the same date, the entry the source gives last is the nature', async () => {
    await crossref(WORK, [
      relay('10.5555/notice.cr1', '990010', 'retraction', [2021, 5, 1]),
      relay('10.5555/notice.cr1', '990010', 'correction', [2021, 5, 1]),
    ]);
    expect(await updatesApi(WORK)).toEqual(['correction 10.5555/notice.cr1 2021-05-01']);
    await crossref(WORK, [
      relay('10.5555/notice.cr1', '990010', 'correction', [2021, 5, 1]),
      relay('10.5555/notice.cr1', '990010', 'retraction', [2021, 5, 1]),
    ]);
    expect(await updatesApi(WORK)).toEqual(['retraction 10.5555/notice.cr1 2021-05-01']);
  });

  test('the CSV speaks for its own record even when a Crossref relay of another nature is later', async () => {
    await csv([`990010,${WORK},10.5555/notice.cr1,5/1/2021 0:00,Correction,+Error in Data;,`]);
    await crossref(WORK, [relay('10.5555/notice.cr1', '990010', 'retraction', [2022, 1, 1])]);
    await servedEverywhere(WORK, ['correction 10.5555/notice.cr1 2021-05-01']);
    expect((await statusPage(WORK)).status).toBe('corrected');
  });
});

describe('an expression of concern escalated to a retraction', () => {
  const WORK = '10.5555/eoc.1';
  const relays = () =>
    crossref(WORK, [
      relay('10.5555/notice.eoc', '990020', 'expression_of_concern', [2019, 3, 1]),
      relay('10.5555/notice.ret', '990020', 'retraction', [2020, 9, 1]),
    ]);

  test('relayed by Crossref alone: retracted', async () => {
    await relays();
    await servedEverywhere(WORK, ['retraction 10.5555/notice.ret 2020-09-01']);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['retracted', 'Retracted']);
    expect(s.notices).toEqual([
      'retraction 10.5555/notice.ret',
      'expression_of_concern 10.5555/notice.eoc (re-classified as retraction on 2020-09-01)',
    ]);
  });

  test('with the CSV listing the record as a retraction: retracted, with the CSV reasons', async () => {
    await csv([`990020,${WORK},10.5555/notice.ret,9/1/2020 0:00,Retraction,+Falsification/Fabrication of Data;,`]);
    await relays();
    await servedEverywhere(WORK, ['retraction 10.5555/notice.ret 2020-09-01']);
    const [u] = (await documents(await postDois(app, '/v2.2/updates', [WORK])))[0]!.updates;
    expect(u!.reasons).toEqual(['Falsification/Fabrication of Data']);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['retracted', 'Retracted']);
  });
});

describe('the CSV over time', () => {
  const WORK = '10.5555/cr.3';

  test('a record whose nature changes between two imports: the old nature is shown re-classified, and the change feed gives the work again', async () => {
    await csv([`990030,${WORK},10.5555/notice.cr3,6/1/2020 0:00,Retraction,+Plagiarism;,`]);
    await servedEverywhere(WORK, ['retraction 10.5555/notice.cr3 2020-06-01']);
    const seqBefore = store.updatesOf(doiKey(WORK))!.changeSeq!;
    await csv([`990030,${WORK},10.5555/notice.cr3,5/1/2021 0:00,Correction,+Error in Data;,`]);
    await servedEverywhere(WORK, ['correction 10.5555/notice.cr3 2021-05-01']);
    expect(store.updatesOf(doiKey(WORK))!.changeSeq!).toBeGreaterThan(seqBefore);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['corrected', 'Corrected']);
    expect(s.notices).toEqual([
      'correction 10.5555/notice.cr3',
      'retraction 10.5555/notice.cr3 (re-classified as correction on 2021-05-01)',
    ]);
  });

  test('a record withdrawn from the CSV while Crossref still relays it: the latest relayed assertion stands', async () => {
    await csv([
      `990040,${WORK},10.5555/notice.cr3,5/1/2021 0:00,Correction,+Error in Data;,`,
      `1,10.5555/other,10.5555/n.other,1/1/2019 0:00,Retraction,,`,
    ]);
    await crossref(WORK, [relay('10.5555/notice.cr3', '990040', 'retraction', [2020, 6, 1])]);
    await servedEverywhere(WORK, ['correction 10.5555/notice.cr3 2021-05-01']);
    expect((await statusPage(WORK)).status).toBe('corrected');
    await csv([`1,10.5555/other,10.5555/n.other,1/1/2019 0:00,Retraction,,`]);
    await servedEverywhere(WORK, ['retraction 10.5555/notice.cr3 2020-06-01']);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['retracted', 'Retracted']);
    // the CSV's correction is gone from every source: no longer listed, not re-classified
    expect(s.notices).toEqual(['correction 10.5555/notice.cr3 (no longer listed)', 'retraction 10.5555/notice.cr3']);
  });
});

describe('assertions without a Record ID: one update per notice, as before', () => {
  test('a retraction and a correction relayed without record-id are two notices, and the retraction decides', async () => {
    const WORK = '10.5555/norec.1';
    await crossref(WORK, [
      relay('10.5555/notice.a', undefined, 'retraction', [2020, 6, 1]),
      relay('10.5555/notice.b', undefined, 'correction', [2021, 5, 1]),
    ]);
    await servedEverywhere(WORK, ['retraction 10.5555/notice.a 2020-06-01', 'correction 10.5555/notice.b 2021-05-01']);
    const s = await statusPage(WORK);
    expect([s.status, s.badge]).toEqual(['retracted', 'Retracted']);
    expect(s.notices.some((n) => n.includes('re-classified'))).toBe(false);
  });

  test('two records of one work keep their own natures', async () => {
    const WORK = '10.5555/tworec.1';
    await crossref(WORK, [
      relay('10.5555/notice.a', '1', 'retraction', [2020, 6, 1]),
      relay('10.5555/notice.b', '2', 'correction', [2021, 5, 1]),
    ]);
    expect(await updatesApi(WORK)).toEqual([
      'retraction 10.5555/notice.a 2020-06-01',
      'correction 10.5555/notice.b 2021-05-01',
    ]);
    expect((await statusPage(WORK)).status).toBe('retracted');
  });
});

test('a store rendered by the rules before one-record-one-nature serves the correction after it is opened, and the feed gives the work once more', async () => {
  const WORK = '10.5555/cr.1';
  await crossref(WORK, [
    relay('10.5555/notice.cr1', '990010', 'retraction', [2020, 6, 1]),
    relay('10.5555/notice.cr1', '990010', 'correction', [2021, 5, 1]),
  ]);
  const good = await updatesApi(WORK);
  const oldList = [
    {
      updateDoi: '10.5555/notice.cr1',
      source: 'retraction-watch',
      updateType: 'retraction',
      updateDate: '2020-06-01',
      reasons: [],
      urls: ['https://doi.org/10.5555/notice.cr1'],
    },
    {
      updateDoi: '10.5555/notice.cr1',
      source: 'retraction-watch',
      updateType: 'correction',
      updateDate: '2021-05-01',
      reasons: [],
      urls: ['https://doi.org/10.5555/notice.cr1'],
    },
  ];
  // as a program of the rules before (SERVED_RULES 4) left it: both natures in the work's row
  await store.close();
  const env = open({ path: `${dir.path}/production/data.mdb`, noSubdir: true, maxDbs: 12 });
  const [meta, changes] = [
    env.openDB({ name: 'meta', encoding: 'msgpack' }),
    env.openDB({ name: 'changes', keyEncoding: 'uint32', encoding: 'msgpack' }),
  ];
  const [seq, row] = [...changes.getRange()].map(({ key, value }) => [key, value] as [number, unknown[]]).at(-1)!;
  await changes.put(seq, [
    row[0],
    row[1],
    row[2],
    `{"doi":${JSON.stringify(WORK)},"updates":${JSON.stringify(oldList)}}`,
    1,
  ]);
  await meta.put(META.servedRules, 4);
  const headBefore = meta.get(META.changeFeed) as { commit: number };
  await env.close();

  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  app = makeApp({ production: { store } });
  expect(good).toEqual(['correction 10.5555/notice.cr1 2021-05-01']);
  expect(await updatesApi(WORK)).toEqual(good);
  expect(await changeFeed(WORK)).toEqual(good);
  expect(store.changeFeed.head().commit).toBe(headBefore.commit + 1);
});
