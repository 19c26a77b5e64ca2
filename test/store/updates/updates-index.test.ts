import { afterEach, beforeEach, expect, test } from 'bun:test';
import { META, openEnvironment, type StoreDbs } from '../../../src/store/environment/environment.ts';
import {
  Store,
  servedUpdates,
  type TableBuilder,
  type UpdatesEntry,
  UpdatesIndex,
  UpdatesTable,
} from '../../../src/store/index.ts';
import { readUpdatesTable, workerTableBuilder } from '../../../src/store/updates/index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { importSample } from '../../http/http-support.ts';
import { syntheticWorks } from '../../support/crossref-api.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';

/**
 * The Updates API's index reloads when the store's updates generation moves: on this thread while a read is
 * quick, on a worker thread once a read was slow. The worker's table is the one a read here gives, and until it
 * lands the current table keeps answering. A read takes the lists from the change feed, and they are the lists
 * rendered from every work's entry.
 */

const MAP = 1 << 30;
let dir: ReturnType<typeof tempDir>;
let store: Store;
let dbs: StoreDbs;
beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  dbs = openEnvironment(store.path, { mapSizeBytes: MAP, readOnly: true });
});
afterEach(async () => {
  await dbs.root.close();
  await store.close();
  dir.remove();
});

const decoder = new TextDecoder();
/** Crossref works JSON through the real importer, in one piece */
async function importCrossref(stores: Store[], json: unknown): Promise<void> {
  async function* one() {
    yield Buffer.from(JSON.stringify(json));
  }
  await importUpdates(stores, 'crossref-json', one());
}
const listOf = (index: UpdatesIndex, doi: string) => {
  const b = index.table().get(doi);
  return b && (JSON.parse(decoder.decode(b)) as { updateDate: string }[]);
};
/** Works 0..n-1 of syntheticWorks, every update dated `day` (the odd ones are the works that get updates). */
const works = (n: number, day: string) => syntheticWorks(n, { days: [day] });

test('a slow reload is read on a worker: the old table answers until it lands, then the table a read here gives', async () => {
  await importCrossref([store], { message: { items: works(2_000, '2024-05-01') } });
  const reads: number[] = [];
  const worker = workerTableBuilder();
  const counted: TableBuilder = (where) => (reads.push(performance.now()), worker(where));
  const index = new UpdatesIndex(dbs, {
    recheckMs: 0,
    builder: counted,
    where: { path: store.path, mapSizeBytes: MAP },
    slowBuildMs: 0,
  });
  expect(index.size).toBe(1_000); // the first read is here, whatever its speed
  expect(reads).toHaveLength(0);
  expect(listOf(index, '10.5555/harvest.1')![0]!.updateDate).toBe('2024-05-01');

  await importCrossref([store], { message: { items: works(3_000, '2024-06-02') } });
  expect(index.size).toBe(1_000); // the worker reads; this table still answers
  expect(reads).toHaveLength(1);
  expect(listOf(index, '10.5555/harvest.2001')).toBeUndefined();
  await waitFor(() => index.size === 1_500, 'the worker read landed', 20_000);
  expect(reads).toHaveLength(1); // one read for one change
  expect(listOf(index, '10.5555/harvest.1')![0]!.updateDate).toBe('2024-06-02');
  expect(listOf(index, '10.5555/harvest.2001')![0]!.updateDate).toBe('2024-06-02');

  // the same buffers, byte for byte, as the read on this thread
  const here = readUpdatesTable(dbs).parts;
  const there = index.table().parts();
  for (const k of Object.keys(here) as (keyof typeof here)[]) expect(there[k]).toEqual(here[k]);
});

test('a quick reload is read here, at once; a worker read that fails is read here the next time', async () => {
  await importCrossref([store], { message: { items: works(200, '2024-05-01') } });
  const failing: TableBuilder = () => ({ done: Promise.reject(new Error('no worker here')), cancel() {} });
  let calls = 0;
  const index = new UpdatesIndex(dbs, {
    recheckMs: 0,
    builder: (w) => (calls++, failing(w)),
    where: { path: store.path, mapSizeBytes: MAP },
    slowBuildMs: 10_000,
  });
  expect(index.size).toBe(100);
  await importCrossref([store], { message: { items: works(400, '2024-05-01') } });
  expect(index.size).toBe(200); // quick: read here, answered at once
  expect(calls).toBe(0);

  const slow = new UpdatesIndex(dbs, {
    recheckMs: 0,
    builder: (w) => (calls++, failing(w)),
    where: { path: store.path, mapSizeBytes: MAP },
    slowBuildMs: 0,
  });
  expect(slow.size).toBe(200);
  await importCrossref([store], { message: { items: works(600, '2024-05-01') } });
  expect(slow.size).toBe(200); // sent to the worker, which fails
  expect(calls).toBe(1);
  await Bun.sleep(10);
  expect(slow.size).toBe(300); // read here after the failure
  expect(calls).toBe(1);
});

test('force reads here, now, even when reads go to the worker', async () => {
  await importCrossref([store], { message: { items: works(200, '2024-05-01') } });
  let calls = 0;
  const index = new UpdatesIndex(dbs, {
    recheckMs: 60_000,
    builder: (w) => (calls++, workerTableBuilder()(w)),
    where: { path: store.path, mapSizeBytes: MAP },
    slowBuildMs: 0,
  });
  expect(index.size).toBe(100);
  await importCrossref([store], { message: { items: works(400, '2024-05-01') } });
  expect(index.size).toBe(100); // not re-checked for a minute
  index.refresh(true);
  expect(index.size).toBe(200);
  expect(calls).toBe(0);
});

test('the lists read from the change feed are those rendered from every work entry (and a store without a feed is read from its entries)', async () => {
  await importSample([store]); // real Retraction Watch rows: mixed-case DOIs, several notices per work
  await importCrossref([store], { message: { items: works(300, '2024-05-01') } });
  // the next import of the same works withdraws the updates of the first 100: they leave the served lists
  await importCrossref([store], {
    message: {
      items: works(300, '2024-05-01').map((w, i) => (i < 100 ? { ...w, 'update-to': [], 'updated-by': [] } : w)),
    },
  });
  const rendered = new Map<string, string>();
  for (const { key, value } of dbs.updates.getRange()) {
    const served = servedUpdates(value as UpdatesEntry);
    if (served.length > 0) rendered.set(key as string, JSON.stringify(served));
  }
  expect(rendered.size).toBeGreaterThan(150);
  expect([...rendered.keys()].some((k) => /[a-z]/.test(k) && k !== k.toUpperCase())).toBe(true);
  const check = (table: UpdatesTable) => {
    expect(table.size).toBe(rendered.size);
    for (const [key, json] of rendered) expect(decoder.decode(table.get(key))).toBe(json);
  };
  check(new UpdatesTable(readUpdatesTable(dbs).parts));

  // a store made before the change feed (read-only, so nothing starts one): rendered from its entries
  const rw = openEnvironment(store.path, { mapSizeBytes: MAP });
  await rw.meta.remove(META.changeFeed);
  check(new UpdatesTable(readUpdatesTable(dbs).parts));
  await rw.root.close();
});

test("a step back of the time of day does not stop the re-checks: another process's import is served within the re-check interval", async () => {
  const realNow = Date.now;
  let offset = 0;
  Date.now = () => realNow() + offset; // the time of day, as NTP sets it
  try {
    await importCrossref([store], { message: { items: works(200, '2024-05-01') } });
    const index = new UpdatesIndex(dbs); // the default clock and re-check interval, as the daemon's
    expect(index.size).toBe(100);
    offset = -3600_000;
    await importCrossref([store], { message: { items: works(400, '2024-05-01') } });
    await waitFor(() => index.size === 200, 'the new import served', 5_000);
  } finally {
    Date.now = realNow;
  }
});
