import { afterEach, beforeEach, expect, test } from 'bun:test';
import { Store } from '../../src/store/index.ts';
import { seeded, tempDir } from '../support/fixtures.ts';
import { accessCountersHeld, outcomes, randomFiles, stateOf, toldOf } from '../support/random-deposits.ts';

/**
 * A backlog applies in one pass (docs/design.md, "A backlog in one pass"): several files in one transaction, their
 * records merged and written in key order. What it leaves must be what applying the files one at a time leaves:
 * every holding with its history, every ledger entry and count, the live counters (per access type too) and what
 * listeners are told.
 */

let dir: ReturnType<typeof tempDir>;
let stores: Store[];

beforeEach(() => {
  dir = tempDir();
  stores = ['production', 'staging'].map((env) => Store.open(dir.path, env as 'production', { mapSizeBytes: 1 << 28 }));
});
afterEach(async () => {
  for (const s of stores) await s.close();
  dir.remove();
});

test('files applied in one pass leave what applying them one at a time leaves', () => {
  for (const seed of [1, 2, 3]) {
    dir.remove();
    dir = tempDir();
    stores = ['production', 'staging'].map((env) =>
      Store.open(dir.path, env as 'production', { mapSizeBytes: 1 << 28 }),
    );
    const [oneAtATime, onePass] = stores as [Store, Store];
    const [toldA, toldB] = [toldOf(oneAtATime), toldOf(onePass)];
    const a = randomFiles(seed, 40).flatMap((f) => outcomes(oneAtATime.applyFilesSync([f])));
    // in passes of random sizes, the first ones over an empty store, the later ones over what they left
    const files = randomFiles(seed, 40);
    const rand = seeded(seed + 100);
    const b: string[] = [];
    for (let i = 0; i < files.length; ) {
      const n = 1 + Math.floor(rand() * 15);
      b.push(...outcomes(onePass.applyFilesSync(files.slice(i, i + n))));
      accessCountersHeld(onePass); // the counters a pass moved, held to a full count after every pass
      i += n;
    }
    expect(b).toEqual(a);
    expect(stateOf(onePass)).toEqual(stateOf(oneAtATime));
    expect(toldB).toEqual(toldA);
    const events = stateOf(onePass).holdings.flatMap((h) => h.events.map((e) => e.kind));
    for (const kind of ['added', 'updated', 'removed', 're-added'] as const) expect(events).toContain(kind);
  }
});

test('a pass with files already applied, and a file of a key applied with other content, decides each as alone', () => {
  const [oneAtATime, onePass] = stores as [Store, Store];
  const files = randomFiles(7, 12);
  const conflicting = { ...randomFiles(8, 1)[0]!, key: files[3]!.key };
  const again = [files[2]!, conflicting, ...files.slice(4, 8)];
  const a = [...files.slice(0, 4), ...again].flatMap((f) => outcomes(oneAtATime.applyFilesSync([f])));
  const b = [...outcomes(onePass.applyFilesSync(files.slice(0, 4))), ...outcomes(onePass.applyFilesSync(again))];
  expect(b).toEqual(a);
  expect(b.slice(4, 6)).toEqual(['duplicate', 'conflict']);
  expect(stateOf(onePass)).toEqual(stateOf(oneAtATime));
});
