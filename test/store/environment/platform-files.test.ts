import { describe, expect, test } from 'bun:test';
import { open } from 'lmdb';
import { fault } from '../../../src/base/index.ts';
import { dataFileOf } from '../../../src/store/environment/index.ts';
import { Store } from '../../../src/store/index.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';

/** The ledger in each platform's order (platform-files.ts), through the Store: what the deposit reports page. */

const ctx = storePerTest(1 << 26);
const T0 = Date.UTC(2026, 2, 1);

function apply(store: Store, platform: string, time: number): string {
  const f = { ...preparedFile([{ doi: `10.5555/${time}` }], { platform, time }), inOrderGiven: true };
  const [status] = store.applyFilesSync([f]);
  if (status?.status !== 'applied') throw new Error(`not applied: ${status?.status}`);
  return f.key;
}

const keysOf = (store: Store, platform: string, limit = 100, after?: string) =>
  store.platformFiles(platform, limit, after)?.entries.map((e) => e.key);

describe("a platform's files, newest first", () => {
  test("each platform's own, by LastModified then key, descending; paged from a file", () => {
    const { store } = ctx;
    const a1 = apply(store, 'acme', T0 + 1000);
    const b1 = apply(store, 'beta', T0 + 1500);
    const a2 = apply(store, 'acme', T0 + 2000);
    const a3 = apply(store, 'acme', T0 + 2000); // the same second: the key breaks the tie
    expect(keysOf(store, 'acme')).toEqual([a3, a2, a1]);
    expect(keysOf(store, 'beta')).toEqual([b1]);
    expect(keysOf(store, 'gamma')).toEqual([]);
    expect(store.platformFiles('acme', 2)).toMatchObject({ next: a2 });
    expect(keysOf(store, 'acme', 2, a2)).toEqual([a1]);
    expect(store.platformFiles('acme', 2, a2)?.next).toBeUndefined();
    // a cursor of another platform's file, or of no file, points nowhere
    expect(store.platformFiles('acme', 2, b1)).toBeUndefined();
    expect(store.platformFiles('acme', 2, 'acme/none.jsonl.gz')).toBeUndefined();
  });

  test('a quarantined file deposited again with another LastModified moves to its new place, listed once', async () => {
    const { store } = ctx;
    const a1 = apply(store, 'acme', T0 + 1000);
    const f = preparedFile([{ doi: '10.5555/q' }], { platform: 'acme', time: T0 + 5000 });
    await store.quarantineFile({ ...f, hash: 'broken' }, fault('NOT_GZIP', 'not gzip'), { tries: 1 });
    expect(keysOf(store, 'acme')).toEqual([f.key, a1]);
    // fixed and deposited again, older than a1 in the bucket's clock this time (a restored backup, say)
    const [status] = store.applyFilesSync([{ ...f, lastModified: T0 + 500, inOrderGiven: true }]);
    expect(status?.status).toBe('applied');
    expect(keysOf(store, 'acme')).toEqual([a1, f.key]);
  });

  test('a store made before the index, or written since by an older program, gets it (again) when opened for writing', async () => {
    const { store, dir } = ctx;
    const a1 = apply(store, 'acme', T0 + 1000);
    const a2 = apply(store, 'acme', T0 + 2000);
    const path = store.path;
    await store.close();
    // what a store of the previous program holds: the ledger, no index
    let raw = open({ path: dataFileOf(path), noSubdir: true, maxDbs: 12 });
    raw.openDB({ name: 'filesByPlatform', encoding: 'msgpack' }).clearSync();
    await raw.close();
    const readOnly = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26, readOnly: true });
    expect(keysOf(readOnly, 'acme')).toEqual([]); // a read-only open builds nothing
    await readOnly.close();
    let again = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
    expect(keysOf(again, 'acme')).toEqual([a2, a1]);
    await again.close();
    // a rollback: the older program writes a ledger entry and not its place (a file at the bucket's top too)
    raw = open({ path: dataFileOf(path), noSubdir: true, maxDbs: 12 });
    const files = raw.openDB({ name: 'files', encoding: 'msgpack' });
    const a3 = 'acme/00000000-0000-4000-8000-0000000000aa.jsonl.gz';
    const entry = { ...files.get(a1), key: a3, lastModified: T0 + 3000 };
    await files.put(a3, entry);
    await files.put('top.jsonl.gz', { ...entry, key: 'top.jsonl.gz', platform: undefined });
    await raw.close();
    again = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
    try {
      expect(keysOf(again, 'acme')).toEqual([a3, a2, a1]);
    } finally {
      await again.close();
    }
  });

  test('an older program that records a file again with a new LastModified (the counts still equal) is caught too', async () => {
    const { store, dir } = ctx;
    const a1 = apply(store, 'acme', T0 + 1000);
    const a2 = apply(store, 'acme', T0 + 2000);
    const f = preparedFile([{ doi: '10.5555/q' }], { platform: 'acme', time: T0 + 5000 });
    await store.quarantineFile({ ...f, hash: 'broken' }, fault('NOT_GZIP', 'not gzip'), { tries: 1 });
    expect(keysOf(store, 'acme')).toEqual([f.key, a2, a1]);
    const path = store.path;
    await store.close();
    // a rollback: the older program applies the fixed file, deposited again older than a1 (its entry, not its place)
    const raw = open({ path: dataFileOf(path), noSubdir: true, maxDbs: 12 });
    const files = raw.openDB({ name: 'files', encoding: 'msgpack' });
    await files.put(f.key, { ...files.get(a1), key: f.key, lastModified: T0 + 500 });
    await raw.close();
    const again = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
    try {
      expect(keysOf(again, 'acme')).toEqual([a2, a1, f.key]);
      // the cursor of the file moved follows it: nothing skipped, nothing twice
      expect(keysOf(again, 'acme', 1, a1)).toEqual([f.key]);
      expect(keysOf(again, 'acme', 5, f.key)).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
