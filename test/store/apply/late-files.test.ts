import { afterEach, beforeEach, expect, test } from 'bun:test';
import { open } from 'lmdb';
import { META } from '../../../src/store/environment/environment.ts';
import { type ApplyStatus, type PreparedFile, Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { preparedFile as file } from '../../support/prepared-file.ts';

/** The store's part of late files (src/store/apply/late-files.ts): it names the later files and checks they were read. */

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

const apply = (f: PreparedFile): ApplyStatus => store.applyFilesSync([f])[0]!;
/** The status, asserted to be of `kind` (a test goes on only with what it relies on) */
function expectStatus<K extends ApplyStatus['status']>(s: ApplyStatus, kind: K): Extract<ApplyStatus, { status: K }> {
  expect(s.status).toBe(kind);
  return s as Extract<ApplyStatus, { status: K }>;
}
const access = () => Object.fromEntries([...store.liveHoldings()].map((h) => [h.doiKey, h.state.accessType]));

test('a file that comes after a later file of its platform is handed back as late, nothing of it written', () => {
  const later = expectStatus(apply(file([{ doi: '10.1234/a', accessType: 'open' }], { time: 2_000 })), 'applied');
  expectStatus(apply(file([{ doi: '10.1234/b', accessType: 'paid' }], { time: 5_000, platform: 'beta' })), 'applied');
  const early = file(
    [
      { doi: '10.1234/a', accessType: 'paid' },
      { doi: '10.1234/c', accessType: 'free' },
    ],
    { time: 1_000 },
  );
  const status = expectStatus(apply(early), 'late');
  // only its own platform's later files
  expect(status.later.map((e) => e.key)).toEqual([later.entry.key]);
  expect(store.fileEntry(early.key)).toBeUndefined();
  expect(access()).toEqual({ '10.1234/a': 'open', '10.1234/b': 'paid' });
});

test('applied again with the later files read: their DOIs are left out and counted; a file applied since makes it late again', () => {
  const l1 = expectStatus(apply(file([{ doi: '10.1234/a', accessType: 'open' }], { time: 2_000 })), 'applied');
  const early = file(
    [
      { doi: '10.1234/a', accessType: 'paid' },
      { doi: '10.1234/c', accessType: 'free' },
    ],
    { time: 1_000 },
  );
  const l2 = expectStatus(apply(file([{ doi: '10.1234/d', accessType: 'open' }], { time: 3_000 })), 'applied');
  const overtaken = { checkedSeqs: new Set([l1.entry.seq!]), doiKeys: new Set(['10.1234/a']) };
  const again = apply({ ...early, overtaken });
  expect(expectStatus(again, 'late').later.map((e) => e.seq)).toEqual([l1.entry.seq!, l2.entry.seq!]);
  const done = expectStatus(
    apply({ ...early, overtaken: { ...overtaken, checkedSeqs: new Set([l1.entry.seq!, l2.entry.seq!]) } }),
    'applied',
  );
  expect(done.entry.counts).toMatchObject({ records: 2, added: 1, overtaken: 1 });
  expect(access()).toEqual({ '10.1234/a': 'open', '10.1234/c': 'free', '10.1234/d': 'open' });
  expect(store.liveCounts()).toEqual({ acme: 3 });
});

test("--ingest's files (inOrderGiven) are applied as the newest, whatever their LastModified", () => {
  apply(file([{ doi: '10.1234/a', accessType: 'open' }], { time: 2_000 }));
  const status = apply({ ...file([{ doi: '10.1234/a', accessType: 'paid' }], { time: 1_000 }), inOrderGiven: true });
  expect(status.status).toBe('applied');
  expect(access()).toEqual({ '10.1234/a': 'paid' });
  // it does not move the platform's place in apply order: a file before the newest is still late
  const between = apply(file([{ doi: '10.1234/b', accessType: 'open' }], { time: 1_500 }));
  expect(expectStatus(between, 'late').later.map((e) => e.lastModified)).toEqual([2_000]);
});

test('a store written before the newest applied file was kept finds the later files from its ledger', async () => {
  apply(file([{ doi: '10.1234/b', accessType: 'open' }], { time: 500 }));
  apply(file([{ doi: '10.1234/a', accessType: 'open' }], { time: 2_000 }));
  await store.close();
  const env = open({ path: `${dir.path}/production/data.mdb`, noSubdir: true, maxDbs: 12 });
  await env.openDB({ name: 'meta', encoding: 'msgpack' }).remove(META.newestApplied('acme'));
  await env.close();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  const status = apply(file([{ doi: '10.1234/a', accessType: 'paid' }], { time: 1_800 }));
  expect(expectStatus(status, 'late').later.map((e) => e.lastModified)).toEqual([2_000]);
});
