import { expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PreparedFile, Store } from '../../../src/store/index.ts';
import { seeded } from '../../support/fixtures.ts';
import { accessCountersHeld, outcomes, randomFiles, stateOf } from '../../support/random-deposits.ts';
import { storesPerTest } from '../../support/temp-store.ts';

/**
 * A backlog applied as one sorted pass (docs/design.md, "A backlog in one sorted pass"): the files' records merged
 * through sorted runs on disk, written in key order a chunk at a time. It must leave what applying the files one at
 * a time leaves (holdings with their histories, ledger entries and counts, live counters, sequence numbers), over an
 * empty store (append mode) and a populated one, and again after a crash between chunks.
 */

const stores = storesPerTest();
const open = (env: 'production' | 'staging') => stores.open({ env });

/** Builds a sorted pass of `files` in groups of random sizes (each group one run). */
function buildPass(store: Store, files: readonly PreparedFile[], seed: number) {
  const rand = seeded(seed);
  const builder = store.sortedPassBuilder();
  const left: PreparedFile[] = [];
  for (let i = 0; i < files.length; ) {
    const n = 1 + Math.floor(rand() * 9);
    left.push(...builder.add(files.slice(i, i + n)));
    i += n;
  }
  return { builder, left };
}

function oneAtATime(seed: number, count: number): { store: Store; statuses: string[] } {
  const store = open('staging');
  return { store, statuses: randomFiles(seed, count).flatMap((f) => outcomes(store.applyFilesSync([f]))) };
}

test('a sorted pass over an empty store leaves what applying the files one at a time leaves', async () => {
  for (const seed of [1, 2, 3]) {
    await stores.restart();
    const alone = oneAtATime(seed, 40);
    const store = open('production');
    const { builder, left } = buildPass(store, randomFiles(seed, 40), seed + 50);
    expect(left).toEqual([]);
    const statuses = await store.applySortedPass(builder, { chunkRecords: 1 + seed * 13 });
    expect(outcomes(statuses!)).toEqual(alone.statuses);
    expect(stateOf(store)).toEqual(stateOf(alone.store));
    accessCountersHeld(store);
    expect(store.standingPass()).toBe('none');
    expect(readdirSync(join(store.path, 'sorted-pass'))).toEqual([]); // the runs are gone
    const events = stateOf(store).holdings.flatMap((h) => h.events.map((e) => e.kind));
    for (const kind of ['added', 'updated', 'removed', 're-added'] as const) expect(events).toContain(kind);
  }
});

test('over a populated store: keys read and written in order; applied files, a conflict and a duplicate are left out, to apply as usual', async () => {
  const files = randomFiles(4, 30);
  const conflicting = { ...randomFiles(5, 1)[0]!, key: files[3]!.key };
  const alone = open('staging');
  const store = open('production');
  const expected = [...files.slice(0, 10), conflicting, files[5]!, ...files.slice(10)].flatMap((f) =>
    outcomes(alone.applyFilesSync([f])),
  );
  const got = files.slice(0, 10).flatMap((f) => outcomes(store.applyFilesSync([f])));
  const { builder, left } = buildPass(store, [conflicting, files[5]!, ...files.slice(10)], 9);
  expect(left.map((f) => f.key)).toEqual([conflicting.key, files[5]!.key]);
  got.push(...left.flatMap((f) => outcomes(store.applyFilesSync([f]))));
  got.push(...outcomes((await store.applySortedPass(builder, { chunkRecords: 17 }))!));
  expect(got).toEqual(expected);
  expect(stateOf(store)).toEqual(stateOf(alone));
  accessCountersHeld(store);
});

test('while a pass stands, files do not apply beside it; a pass whose file another writer decided meanwhile does not begin', async () => {
  const store = open('production');
  const files = randomFiles(6, 12);
  const { builder } = buildPass(store, files.slice(0, 6), 1);
  let tried: unknown;
  await store.applySortedPass(builder, {
    chunkRecords: 5,
    onChunk: () => {
      if (tried === undefined)
        tried = (() => {
          try {
            return store.applyFilesSync([files[6]!]);
          } catch (e) {
            return e;
          }
        })();
    },
  });
  expect(String(tried)).toContain('a sorted pass is applying a backlog');
  const next = buildPass(store, files.slice(6), 2);
  store.applyFilesSync([files[8]!]); // decided after the pass was built
  expect(await store.applySortedPass(next.builder)).toBeUndefined();
  expect(existsSync(next.builder.dir)).toBe(false);
  expect(store.standingPass()).toBe('none');
});

test('a pass stopped after a chunk (a daemon closing) is resumed from it by the next writer, and ends as if never stopped; no backup is taken meanwhile', async () => {
  const alone = oneAtATime(11, 40);
  let store = open('production');
  const { builder } = buildPass(store, randomFiles(11, 40), 3);
  let chunks = 0;
  const stopped = await store
    .applySortedPass(builder, { chunkRecords: 20, onChunk: () => void chunks++, stop: () => chunks === 3 })
    .catch((e: Error) => e);
  expect(stopped).toBeInstanceOf(Error);
  expect((stopped as Error).message).toMatch(/stopped after 6\d of \d+ records/); // three chunks of at least 20, to the end of a key
  // a copy would hold a pass without its runs
  const refused = await store
    .backupTo(join(stores.dir.path, 'backup'))
    .catch((e: { fault?: { code: string } }) => e.fault?.code);
  expect(refused).toBe('BACKUP_FAILED');
  await store.close();
  store = open('production');
  expect(store.standingPass()).toBe('abandoned');
  expect(store.appliedSeq().seq).toBe(0); // nothing of the pass counts as applied until it ends
  const statuses = await store.resumeSortedPass({ chunkRecords: 20 });
  expect(outcomes(statuses)).toEqual(alone.statuses);
  expect(stateOf(store)).toEqual(stateOf(alone.store));
  accessCountersHeld(store);
  expect(store.standingPass()).toBe('none');
});

test('a process killed (SIGKILL) in the middle of a sorted pass: the next writer ends it, as if never killed', async () => {
  const alone = oneAtATime(12, 40);
  const child = Bun.spawn(
    [
      process.execPath,
      join(import.meta.dir, '../../support/sorted-pass-child.ts'),
      stores.dir.path,
      '12',
      '40',
      '25',
      '4',
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  expect(await child.exited).not.toBe(0);
  expect(child.signalCode).toBe('SIGKILL');
  const store = open('production');
  expect(store.standingPass()).toBe('abandoned');
  const statuses = await store.resumeSortedPass({ chunkRecords: 25 });
  expect(outcomes(statuses)).toEqual(alone.statuses);
  expect(stateOf(store)).toEqual(stateOf(alone.store));
  accessCountersHeld(store);
});

test('runs left by a process that died before its pass began are removed by the next pass; a live process spilling keeps its own', async () => {
  const store = open('production');
  const folder = join(store.path, 'sorted-pass');
  const dead = join(folder, 'mj0-999999999-dead01'); // no such pid
  const mine = join(folder, `mj0-${process.pid}-mine01`); // this process, no builder of it now
  const live = join(folder, `mj0-${process.ppid}-live01`); // the test runner's parent: alive
  for (const d of [dead, mine, live]) {
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'run-00000.bin'), 'x');
  }
  const { builder } = buildPass(store, randomFiles(13, 6), 4);
  expect(readdirSync(folder).sort()).toEqual([builder.id, `mj0-${process.ppid}-live01`].sort());
  await store.applySortedPass(builder, { chunkRecords: 10 });
  expect(readdirSync(folder)).toEqual([`mj0-${process.ppid}-live01`]);
});
