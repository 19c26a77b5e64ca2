import { describe, expect, test } from 'bun:test';
import { plainDoiHash } from '../../../src/doi/index.ts';
import {
  type BuildEvents,
  type BuiltIndex,
  HoldingsIndex,
  type IndexBuilder,
  recordView,
  workerBuilder,
} from '../../../src/entitlement/index.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';

/**
 * A warming index (a build runs elsewhere) answers from the store what its table lacks; the build lands with the
 * files told meanwhile replayed. Held here to an index built on this thread from the store as it is.
 */

const PLATFORMS = ['acme', 'beta', 'core'];

const temp = storePerTest();

/** A random deposit file: adds, changes and removals over 120 DOIs (some non-ASCII, some with several links). */
function randomFile(rand: () => number) {
  const access = ['paid', 'open', 'free', 'permFree', undefined];
  const lines = Array.from({ length: 1 + Math.floor(rand() * 30) }, () => {
    const doi = `10.${1000 + Math.floor(rand() * 2)}/Doc-${Math.floor(rand() * 60)}${rand() < 0.1 ? 'é' : ''}`;
    if (rand() < 0.15) return { doi, deleted: true };
    const a = access[Math.floor(rand() * access.length)];
    const vor = Array.from({ length: Math.floor(rand() * 4) }, (_, i) => ({
      url: `https://host.example/${doi}/${i}.pdf`,
      contentType: 'application/pdf',
    }));
    return { doi, ...(a ? { accessType: a } : {}), ...(vor.length ? { vor } : {}) };
  });
  return preparedFile(lines, { platform: PLATFORMS[Math.floor(rand() * PLATFORMS.length)] });
}

/** What an index answers for a DOI key, as plain data (platform names, access, vor JSON text). */
function answer(index: HoldingsIndex, key: string) {
  return index.holdingsOfKey(key)?.map((h) => ({ ...h, vorJson: h.vorJson && new TextDecoder().decode(h.vorJson) }));
}

function completeNow(): HoldingsIndex {
  const index = new HoldingsIndex(temp.store);
  index.build();
  return index;
}

/** A build that reads the store when asked (as the worker does) and lands when the test says. */
function heldBuilder() {
  const runs: { built: BuiltIndex; land: () => void; fail: (e: Error) => void; cancelled: boolean }[] = [];
  const builder: IndexBuilder = (s) => {
    const other = new HoldingsIndex(s);
    other.build();
    const built = other.exported();
    other.close();
    let land = () => {};
    let fail = (_: Error) => {};
    const done = new Promise<BuiltIndex>((resolve, reject) => {
      land = () => resolve(built);
      fail = reject;
    });
    const run = { built, land, fail, cancelled: false };
    runs.push(run);
    return { done, cancel: () => (run.cancelled = true) };
  };
  return { builder, runs };
}

function events() {
  const seen: string[] = [];
  const e: BuildEvents = { built: (f) => seen.push(`built ${f.dois}`), failed: (m) => seen.push(`failed ${m}`) };
  return { e, seen };
}

const keys = [
  ...Array.from({ length: 60 }, (_, i) => `10.1000/doc-${i}`),
  ...Array.from({ length: 60 }, (_, i) => `10.1001/doc-${i}é`),
  '10.9999/none',
];

describe('a warming index', () => {
  test('answers every lookup as a complete index would while files are applied, then lands with them replayed', async () => {
    const rand = seeded(41);
    for (let f = 0; f < 10; f++) temp.store.applyFilesSync([randomFile(rand)]);
    const { builder, runs } = heldBuilder();
    const { e, seen } = events();
    const index = new HoldingsIndex(temp.store);
    index.buildInBackground(builder, e);
    expect(index.complete).toBe(false);
    expect(index.size).toBe(0);
    for (let f = 0; f < 40; f++) {
      temp.store.applyFilesSync([randomFile(rand)]);
      index.refresh();
      const truth = completeNow();
      for (const key of keys) if (rand() < 0.3) expect(answer(index, key)).toEqual(answer(truth, key));
      truth.close();
    }
    expect(index.size).toBeGreaterThan(0); // it kept what it read
    expect(index.complete).toBe(false);
    runs[0]!.land();
    await Bun.sleep(0);
    expect(index.complete).toBe(true);
    expect(seen).toEqual([`built ${index.size}`]);
    const truth = completeNow();
    for (const key of keys) expect(answer(index, key)).toEqual(answer(truth, key));
    expect(index.size).toBe(truth.size);
    truth.close();
    index.close();
  });

  test('a plain DOI looked up by its bytes reads the store by its key, in any ASCII case', () => {
    temp.store.applyFilesSync([
      preparedFile([{ doi: '10.1234/Mixed.Case', accessType: 'open', vor: [{ url: 'https://x.example/a' }] }]),
    ]);
    const { builder } = heldBuilder();
    const index = new HoldingsIndex(temp.store);
    index.buildInBackground(builder, events().e);
    const bytes = new TextEncoder().encode('10.1234/MIXED.case');
    const truth = completeNow();
    const ref = index.refAt(bytes, 0, bytes.length, foldedHashOf(bytes));
    expect(ref).toBeGreaterThanOrEqual(0);
    expect(index.holdings(index.read(ref, recordView()))).toEqual(truth.holdingsOfKey('10.1234/mixed.case')!);
    const none = new TextEncoder().encode('10.1234/absent');
    expect(index.refAt(none, 0, none.length, foldedHashOf(none))).toBe(-1);
    truth.close();
    index.close();
  });

  test("another process's files: what was read is dropped, and a build that read before them is made again", async () => {
    let clock = 0;
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/a', accessType: 'open' }])]);
    const { builder, runs } = heldBuilder();
    const index = new HoldingsIndex(temp.store, 250, () => clock);
    index.buildInBackground(builder, events().e);
    expect(answer(index, '10.1234/a')).toHaveLength(1);
    const generation = index.generation;
    const other = Store.open(temp.dir.path, 'production', { mapSizeBytes: 1 << 30 });
    other.applyFilesSync([preparedFile([{ doi: '10.1234/a', deleted: true }])]);
    clock += 250;
    await Bun.sleep(1); // lmdb-js renews its read snapshot when the event loop turns, as between two requests
    index.refresh();
    expect(index.generation).toBe(generation + 1); // the service drops its cached answers on this
    expect(index.get('10.1234/a')).toBeUndefined();
    // our own file next: the build (read before the other process's file) cannot take it on without a gap
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/b', accessType: 'free' }])]);
    runs[0]!.land();
    await Bun.sleep(0);
    expect(index.complete).toBe(false);
    expect(runs).toHaveLength(2);
    runs[1]!.land();
    await Bun.sleep(0);
    expect(index.complete).toBe(true);
    expect(index.get('10.1234/a')).toBeUndefined();
    expect(answer(index, '10.1234/b')).toEqual([{ platform: 'acme', accessType: 'free', vorJson: undefined }]);
    await other.close();
    index.close();
  });

  test("another process's files seen while warming, none of ours after: the landed build lacks them and is read again", async () => {
    let clock = 0;
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/a', accessType: 'open' }])]);
    const { builder, runs } = heldBuilder();
    const index = new HoldingsIndex(temp.store, 250, () => clock);
    index.buildInBackground(builder, events().e);
    const other = Store.open(temp.dir.path, 'production', { mapSizeBytes: 1 << 30 });
    other.applyFilesSync([
      preparedFile([
        { doi: '10.1234/a', deleted: true },
        { doi: '10.1234/n', accessType: 'free' },
      ]),
    ]);
    clock += 250;
    await Bun.sleep(1);
    index.refresh(); // sees the other process's file
    expect(index.get('10.1234/a')).toBeUndefined();
    runs[0]!.land(); // read before that file
    await Bun.sleep(0);
    expect(index.complete).toBe(false);
    expect(index.get('10.1234/a')).toBeUndefined(); // never an answer older than one already given
    expect(index.get('10.1234/n')).toBeDefined();
    runs[1]!.land();
    await Bun.sleep(0);
    expect(index.complete).toBe(true);
    expect(index.get('10.1234/a')).toBeUndefined();
    expect(index.get('10.1234/n')).toBeDefined();
    await other.close();
    index.close();
  });

  test('a build that fails elsewhere and here too: the index keeps answering from the store, and tries again later', async () => {
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/a', accessType: 'paid' }])]);
    const { builder, runs } = heldBuilder();
    const { e, seen } = events();
    const index = new HoldingsIndex(temp.store);
    index.buildInBackground(builder, e);
    (index as unknown as { build: () => void }).build = () => {
      throw new Error('unreadable');
    };
    runs[0]!.fail(new Error('worker gone'));
    await Bun.sleep(0);
    expect(seen).toEqual(['failed Error: worker gone', 'failed Error: unreadable']);
    expect(index.complete).toBe(false);
    expect(index.failures).toBe(2);
    expect(answer(index, '10.1234/a')).toEqual([{ platform: 'acme', accessType: 'paid', vorJson: undefined }]);
    index.close(); // cancels the retry
  });

  test('a build that fails elsewhere is made on this thread, and the failure is told', async () => {
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/a', accessType: 'paid' }])]);
    const { builder, runs } = heldBuilder();
    const { e, seen } = events();
    const index = new HoldingsIndex(temp.store);
    index.buildInBackground(builder, e);
    runs[0]!.fail(new Error('worker gone'));
    await Bun.sleep(0);
    expect(index.complete).toBe(true);
    expect(index.failures).toBe(1);
    expect(seen).toEqual(['failed Error: worker gone', 'built 1']);
    index.close();
  });

  test('closing cancels the build, and a build that lands after is dropped', async () => {
    const { builder, runs } = heldBuilder();
    const index = new HoldingsIndex(temp.store);
    index.buildInBackground(builder, events().e);
    index.close();
    expect(runs[0]!.cancelled).toBe(true);
    runs[0]!.land();
    await Bun.sleep(0);
    expect(index.complete).toBe(false);
  });
});

test('the worker thread builds the index a build on this thread makes, with files applied meanwhile replayed', async () => {
  const rand = seeded(7);
  for (let f = 0; f < 30; f++) temp.store.applyFilesSync([randomFile(rand)]);
  const { e, seen } = events();
  const index = new HoldingsIndex(temp.store);
  index.buildInBackground(workerBuilder(), e);
  for (let f = 0; f < 5; f++) await temp.store.applyFiles([randomFile(rand)]);
  const deadline = Date.now() + 30_000;
  while (!index.complete && Date.now() < deadline) await Bun.sleep(5);
  // one build landed; files applied after it landed (a loaded machine) are followed as usual, so its figure may be
  // below the final size, never above
  expect(seen).toHaveLength(1);
  const built = Number(/^built (\d+)$/.exec(seen[0]!)?.[1]);
  expect(built).toBeGreaterThan(0);
  expect(built).toBeLessThanOrEqual(index.size);
  const truth = completeNow();
  expect(index.size).toBe(truth.size);
  for (const key of keys) expect(answer(index, key)).toEqual(answer(truth, key));
  truth.close();
  index.close();
});

/** The hash of a plain DOI's bytes, as the request reader computes it. */
function foldedHashOf(b: Uint8Array): number {
  return plainDoiHash(b, 0, b.length);
}
