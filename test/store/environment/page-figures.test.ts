import { afterEach, expect, test } from 'bun:test';
import { join } from 'node:path';
import { openEnvironment, type StoreDbs } from '../../../src/store/environment/environment.ts';
import { dataFileOf } from '../../../src/store/environment/lmdb-file.ts';
import { putFileEntry } from '../../../src/store/environment/platform-files.ts';
import { copyStore, pageFigures } from '../../../src/store/environment/store-file.ts';
import { tempDir } from '../../support/fixtures.ts';

/** --stats' page figures (src/store/environment/store-file.ts) against a compacted copy, which has no free page. */

let dir: ReturnType<typeof tempDir>;
const open: StoreDbs[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.root.close();
  dir?.remove();
});

const env = (path: string) => {
  const dbs = openEnvironment(path, { mapSizeBytes: 256 * 1024 * 1024 });
  open.push(dbs);
  return dbs;
};

test('every sub-database counts as in use: a compacted copy has no free pages, whichever trees hold its data', async () => {
  dir = tempDir('doi-holdings-page-figures-');
  const dbs = env(join(dir.path, 'production'));
  // rows in each tree, the change feed's two among them, many pages of each
  const text = 'x'.repeat(300);
  await dbs.root.transaction(() => {
    for (let i = 0; i < 2000; i++) {
      dbs.changes.put(i + 1, { work: `10.5555/w${i}`, text });
      dbs.changeLineage.put(i + 1, { seq: i, text });
      dbs.updates.put(`10.5555/u${i}`, { text });
      // through the ledger's one writer, so that its index beside it is whole (or the copy's open would build it)
      putFileEntry(dbs, { key: `acme/f${i}.jsonl.gz`, lastModified: i, text } as never);
    }
  });
  const before = pageFigures(dbs, dataFileOf(dbs.path));
  expect(before.usedPages).toBeGreaterThan((4 * 2000 * 300) / before.pageSize / 2);

  const target = join(dir.path, 'copy', 'production');
  await copyStore(dbs, dataFileOf(target));
  const copy = env(target);
  const after = pageFigures(copy, dataFileOf(target));
  expect(after.freePages).toBe(0);
  expect(after.usedPages).toBeLessThanOrEqual(before.usedPages);
});
