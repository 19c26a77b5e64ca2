import { afterEach, beforeEach } from 'bun:test';
import { Store } from '../../src/store/index.ts';
import { tempDir } from './fixtures.ts';

type TempDir = ReturnType<typeof tempDir>;

/**
 * A real production store (LMDB on disk, never in memory) in a new temporary folder for each test of the file
 * that calls this at its top level, closed and removed after the test. Read `store` and `dir` inside tests and
 * hooks: each test has its own.
 */
export function storePerTest(mapSizeBytes = 1 << 30): { readonly store: Store; readonly dir: TempDir } {
  let dir: TempDir | undefined;
  let store: Store | undefined;
  beforeEach(() => {
    dir = tempDir();
    store = Store.open(dir.path, 'production', { mapSizeBytes });
  });
  afterEach(async () => {
    await store?.close();
    dir?.remove();
    store = undefined;
    dir = undefined;
  });
  const outside = () => new Error('storePerTest: its store is there inside a test or a hook only');
  return {
    get store() {
      if (!store) throw outside();
      return store;
    },
    get dir() {
      if (!dir) throw outside();
      return dir;
    },
  };
}
