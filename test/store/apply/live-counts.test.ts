import { expect, test } from 'bun:test';
import type { Logger } from '../../../src/base/index.ts';
import { syncLiveByAccess } from '../../../src/store/apply/live-counts.ts';
import { META, openEnvironment, type StoreDbs } from '../../../src/store/environment/environment.ts';
import type { Store } from '../../../src/store/index.ts';
import { seeded } from '../../support/fixtures.ts';
import { preparedFile as file } from '../../support/prepared-file.ts';
import { accessCountersHeld, countedFromHoldings, randomFiles } from '../../support/random-deposits.ts';
import { storesPerTest } from '../../support/temp-store.ts';

/**
 * Live holdings per platform and access type are counters the store moves with the holdings (apply/live-counts.ts,
 * docs/design.md "Store layout"); a store without them (made by an older program, or written by one since) is
 * counted once by its next writable open. Held to a full count of the holdings throughout.
 */

const MAP = 1 << 28;
const stores = storesPerTest(MAP);
const open = (opts: { readOnly?: boolean; log?: Logger } = {}) => stores.open(opts);

/**
 * The store's META as an older program left it (written through another handle, as another process would): no
 * access counters, or counters behind the holdings.
 */
async function asOlderProgramLeftIt(store: Store, stamp?: 'behind'): Promise<void> {
  const dbs: StoreDbs = openEnvironment(store.path, { mapSizeBytes: MAP });
  await dbs.root.transaction(() => {
    if (stamp === 'behind') {
      dbs.meta.putSync(META.liveByAccessAt, (dbs.meta.get(META.nextSeq) as number) - 1);
      return;
    }
    for (const key of dbs.meta.getKeys({ ...META.liveByAccessRange })) dbs.meta.removeSync(key);
    dbs.meta.removeSync(META.liveByAccessAt);
  });
}

const none = { paid: 0, open: 0, free: 0, permFree: 0, none: 0 };

test('additions, access changes (paid -> open), removals and re-adds move the counters; unchanged records do not', () => {
  const store = open();
  store.applyFilesSync([
    file([{ doi: '10.1234/a', accessType: 'paid' }, { doi: '10.1234/b', accessType: 'paid' }, { doi: '10.1234/c' }]),
  ]);
  store.applyFilesSync([file([{ doi: '10.1234/d', accessType: 'free' }], { platform: 'beta' })]);
  expect(store.liveCountsByAccess()).toEqual({
    acme: { ...none, paid: 2, none: 1 },
    beta: { ...none, free: 1 },
  });
  store.applyFilesSync([
    file([
      { doi: '10.1234/a', accessType: 'open' }, // paid -> open
      { doi: '10.1234/b', accessType: 'paid', vor: [{ url: 'https://h.example/b.pdf' }] }, // updated, same access
      { doi: '10.1234/c' }, // unchanged
      { doi: '10.1234/x', deleted: true }, // removal of a holding not held
    ]),
  ]);
  expect(store.liveCountsByAccess()).toEqual({
    acme: { ...none, paid: 1, open: 1, none: 1 },
    beta: { ...none, free: 1 },
  });
  store.applyFilesSync([
    file([
      { doi: '10.1234/a', deleted: true },
      { doi: '10.1234/c', deleted: true },
    ]),
  ]);
  expect(store.liveCountsByAccess()!.acme).toEqual({ ...none, paid: 1 });
  store.applyFilesSync([file([{ doi: '10.1234/a', accessType: 'permFree' }])]); // re-added, under its new access type
  expect(store.liveCountsByAccess()!.acme).toEqual({ ...none, paid: 1, permFree: 1 });
  accessCountersHeld(store);
  expect(store.liveCounts()).toEqual({ acme: 2, beta: 1 });
});

test('a store without the counters (an older program made it) is counted once by a writable open, and logged; read-only it has none', async () => {
  let store = open();
  for (const f of randomFiles(21, 30)) store.applyFilesSync([f]);
  // a state over 127 bytes: its length takes two bytes before the access code the count reads
  const url = `https://h.example/${'x'.repeat(200)}.pdf`;
  store.applyFilesSync([
    file([{ doi: '10.1234/long', accessType: 'permFree', vor: [{ url }] }], { platform: 'delta' }),
  ]);
  const expected = store.liveCountsByAccess();
  expect(expected!.delta).toEqual({ ...none, permFree: 1 });
  await store.close();
  await asOlderProgramLeftIt(store);
  const readOnly = open({ readOnly: true });
  expect(readOnly.liveCountsByAccess()).toBeUndefined(); // a read-only open counts nothing
  await readOnly.close();
  const logged: unknown[][] = [];
  const fresh = stores.open({ under: 'fresh', log: { log: (...a) => logged.push(a) } });
  expect(fresh.liveCountsByAccess()).toEqual({});
  expect(logged).toEqual([]); // a new store: nothing to count, no line
  store = open({ log: { log: (...a) => logged.push(a) } });
  expect(store.liveCountsByAccess()).toEqual(expected!);
  accessCountersHeld(store);
  expect(logged).toEqual([
    ['info', 'store.access_counted', { env: 'production', holdings: expect.any(Number), ms: expect.any(Number) }],
  ]);
  expect((logged[0]![2] as { holdings: number }).holdings).toBe(
    Object.values(store.liveCounts()).reduce((a, b) => a + b, 0),
  );
  await store.close();
  logged.length = 0;
  store = open({ log: { log: (...a) => logged.push(a) } });
  expect(logged).toEqual([]); // once
  // and they go on moving from there, by passes and a sorted pass
  store.applyFilesSync(randomFiles(22, 10));
  accessCountersHeld(store);
  const builder = store.sortedPassBuilder();
  builder.add(randomFiles(23, 12).map((f) => ({ ...f, key: `${f.key}.23` })));
  await store.applySortedPass(builder, { chunkRecords: 7 });
  accessCountersHeld(store);
});

test('files an older program applied since (counters behind the apply sequence) are counted again by the next writable open', async () => {
  let store = open();
  store.applyFilesSync([file([{ doi: '10.1234/a', accessType: 'paid' }])]);
  store.applyFilesSync([file([{ doi: '10.1234/a', accessType: 'open' }])]);
  await asOlderProgramLeftIt(store, 'behind');
  // a file applied now (the write sees the older program's) does not make counters behind look current
  store.applyFilesSync([file([{ doi: '10.1234/b', accessType: 'free' }])]);
  expect(store.liveCountsByAccess()).toBeUndefined();
  await store.close();
  store = open();
  expect(store.liveCountsByAccess()).toEqual({ acme: { ...none, open: 1, free: 1 } });
  accessCountersHeld(store);
});

test('a holding written between the count and its write (another process) is counted in the write transaction', async () => {
  const store = open();
  for (const f of randomFiles(31, 8)) store.applyFilesSync([f]);
  await asOlderProgramLeftIt(store);
  const dbs = openEnvironment(store.path, { mapSizeBytes: MAP });
  const late = randomFiles(32, 3).map((f) => ({ ...f, key: `${f.key}.32` }));
  syncLiveByAccess(dbs, () => store.applyFilesSync(late));
  accessCountersHeld(store);
});

test('counted while a sorted pass stands half done (its chunks written, its counts not yet): the pass ends with the counters held', async () => {
  for (const olderPass of [false, true]) {
    await stores.restart();
    let store = open();
    for (const f of randomFiles(41, 10)) store.applyFilesSync([f]);
    const builder = store.sortedPassBuilder();
    const rand = seeded(5);
    const files = randomFiles(42, 30).map((f) => ({ ...f, key: `${f.key}.42` }));
    for (let i = 0; i < files.length; ) {
      const n = 1 + Math.floor(rand() * 9);
      builder.add(files.slice(i, i + n));
      i += n;
    }
    let chunks = 0;
    const stopped = await store
      .applySortedPass(builder, { chunkRecords: 20, onChunk: () => void chunks++, stop: () => chunks === 2 })
      .catch((e: Error) => e);
    expect(stopped).toBeInstanceOf(Error);
    await store.close();
    // an older program's pass: it kept no access moves, and the counters' stamp may still agree (a rollback after
    // they were counted); ours: the counters are missing
    if (!olderPass) await asOlderProgramLeftIt(store);
    if (olderPass) {
      // a pass an older program began keeps no access deltas
      const dbs = openEnvironment(store.path, { mapSizeBytes: MAP });
      dbs.root.transactionSync(() => {
        const { access: _, ...record } = dbs.meta.get(META.sortedPass);
        dbs.meta.putSync(META.sortedPass, record);
      });
    }
    store = open();
    expect(store.standingPass()).toBe('abandoned');
    await store.resumeSortedPass({ chunkRecords: 20 });
    accessCountersHeld(store);
    expect(countedFromHoldings(store)).not.toEqual({});
  }
});
