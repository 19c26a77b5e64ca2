import { afterEach, beforeEach } from 'bun:test';
import { join } from 'node:path';
import type { Logger } from '../../src/base/index.ts';
import { Store } from '../../src/store/index.ts';
import { tempDir } from './fixtures.ts';

type TempDir = ReturnType<typeof tempDir>;

/**
 * A real production store (LMDB on disk, never in memory) in a new temporary folder for each test of the file
 * that calls this at its top level, closed and removed after the test (storesPerTest, one store). Read `store` and
 * `dir` inside tests and hooks: each test has its own.
 */
export function storePerTest(mapSizeBytes = 1 << 30): { readonly store: Store; readonly dir: TempDir } {
  const stores = storesPerTest(mapSizeBytes);
  let store: Store | undefined;
  // registered after storesPerTest's hooks: its folder is there before this opens the store in it
  beforeEach(() => {
    store = stores.open();
  });
  afterEach(() => {
    store = undefined;
  });
  return {
    get store() {
      if (!store) throw new Error('storePerTest: its store is there inside a test or a hook only');
      return store;
    },
    get dir() {
      return stores.dir;
    },
  };
}

/**
 * Real stores (LMDB on disk) opened in one new temporary folder for each test of the file that calls this at its
 * top level: `open` opens one there (the production environment unless `env` says, or in a folder of `dir`), and
 * every store opened is closed after the test, the folder removed; `restart` does the same at once and gives the test
 * a new empty folder (a test that tries several cases from nothing).
 */
export function storesPerTest(mapSizeBytes = 1 << 28): {
  readonly dir: TempDir;
  open(opts?: { env?: 'production' | 'staging'; under?: string; readOnly?: boolean; log?: Logger }): Store;
  restart(): Promise<void>;
} {
  let dir: TempDir | undefined;
  const stores: Store[] = [];
  const closeAll = async () => {
    for (const s of stores.splice(0)) await s.close();
    dir?.remove();
    dir = undefined;
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(closeAll);
  const here = () => {
    if (!dir) throw new Error('storesPerTest: its folder is there inside a test or a hook only');
    return dir;
  };
  return {
    get dir() {
      return here();
    },
    open({ env = 'production', under, ...opts } = {}) {
      const path = under === undefined ? here().path : join(here().path, under);
      const s = Store.open(path, env, { mapSizeBytes, ...opts });
      stores.push(s);
      return s;
    },
    async restart() {
      await closeAll();
      dir = tempDir();
    },
  };
}
