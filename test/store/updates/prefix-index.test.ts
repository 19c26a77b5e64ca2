import { afterAll, beforeAll, expect, test } from 'bun:test';
import { doiKey } from '../../../src/doi/index.ts';
import { openEnvironment, type StoreDbs } from '../../../src/store/environment/environment.ts';
import { Store } from '../../../src/store/index.ts';
import { storeReadJob } from '../../../src/store/read-models/read-job.ts';
import type { StoreRead } from '../../../src/store/read-models/reloading.ts';
import { keyHash } from '../../../src/store/updates/index.ts';
import { PrefixIndex, type PrefixParts, readPrefixParts } from '../../../src/store/updates/prefix-index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { SAMPLE } from '../../support/rw-sample.ts';

/**
 * The private lookup's index as buffers: read on the store's worker it is the index read here, byte for byte,
 * and a lookup finds every work under a prefix, once, in hash order, as a scan of the works would.
 */

const MAP = 256 * 1024 ** 2;
let dir: ReturnType<typeof tempDir>;
let store: Store;
let dbs: StoreDbs;
beforeAll(async () => {
  dir = tempDir('prefix-index');
  store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  await importUpdates([store], 'retraction-watch-csv', [Buffer.from(SAMPLE)] as unknown as AsyncIterable<Uint8Array>);
  dbs = openEnvironment(store.path, { mapSizeBytes: MAP, readOnly: true });
});
afterAll(async () => {
  await dbs.root.close();
  await store.close();
  dir.remove();
});

test('read on the worker, the index is the one read here, byte for byte', async () => {
  const here = readPrefixParts(dbs);
  const there = await storeReadJob<StoreRead<PrefixParts>>(
    { kind: 'prefixes', path: store.path, mapSizeBytes: MAP },
    'the prefix index worker',
  ).done;
  expect(there.version).toBe(here.version);
  expect(here.value.list.works).toBeGreaterThan(2_000);
  for (const k of ['hashes', 'items', 'itemStart'] as const)
    expect(
      Buffer.from(there.value[k].buffer, there.value[k].byteOffset, there.value[k].byteLength).equals(
        Buffer.from(here.value[k].buffer, here.value[k].byteOffset, here.value[k].byteLength),
      ),
    ).toBe(true);
  expect(there.value.list.etag).toBe(here.value.list.etag);
  expect(Buffer.from(there.value.list.gzip).equals(Buffer.from(here.value.list.gzip))).toBe(true);
});

test('a lookup: every work under the prefixes, once, in hash order, each with its hash and its item', () => {
  const index = new PrefixIndex(readPrefixParts(dbs).value);
  const all = index.lookup([...'0123456789abcdef']);
  expect(all).toHaveLength(index.list.works);
  const works = all.map((t) => JSON.parse(t) as { hash: string; doi: string; updates: unknown[] });
  expect(works.map((w) => w.hash)).toEqual(works.map((w) => w.hash).sort());
  for (const w of works.slice(0, 50)) {
    expect(w.hash).toBe(keyHash(doiKey(w.doi)));
    expect(w.updates.length).toBeGreaterThan(0);
  }
  const probe = works[77]!;
  const p = probe.hash.slice(0, index.prefixLength);
  const under = works.filter((w) => w.hash.startsWith(p));
  // the same prefix twice, a longer one inside it, and one that no hash has: each work once
  const none = [...'0123456789abcdef'].map((d) => p + d).find((q) => !works.some((w) => w.hash.startsWith(q)))!;
  expect(index.lookup([p, p, probe.hash.slice(0, index.prefixLength + 2), none]).map((t) => JSON.parse(t))).toEqual(
    under,
  );
  expect(index.lookup([probe.hash]).map((t) => JSON.parse(t))).toEqual([probe]);
  expect(index.lookup(['g'])).toEqual([]);
});
