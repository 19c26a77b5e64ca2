import { expect, test } from 'bun:test';
import { Reloading, type StoreRead } from '../../../src/store/read-models/reloading.ts';

/**
 * The reload rule of the Updates API's index and the private lookup's: here while reads are quick, elsewhere
 * once one was slow (the last value answering meanwhile), here again after a read elsewhere failed, and the
 * value of the latest read begun kept. A fake store: `version` moves when told; reads say how long they took.
 */
function fakeStore(opts: { slowMs?: number; elsewhere?: boolean } = {}) {
  const s = {
    version: 1,
    readMs: 1,
    here: 0,
    there: [] as { resolve(r: StoreRead<string>): void; reject(e: Error): void; version: number; cancelled: boolean }[],
  };
  const reloading = new Reloading<string>({
    version: () => s.version,
    readHere: () => (s.here++, { value: `v${s.version} here`, version: s.version, ms: s.readMs }),
    readElsewhere:
      opts.elsewhere === false
        ? undefined
        : () => {
            let job!: (typeof s.there)[number];
            const done = new Promise<StoreRead<string>>(
              (resolve, reject) => (job = { resolve, reject, version: s.version, cancelled: false }),
            );
            s.there.push(job);
            return { done, cancel: () => (job.cancelled = true) };
          },
    slowMs: opts.slowMs ?? 50,
  });
  const land = async (i: number, ms = 1) => {
    const job = s.there[i]!;
    job.resolve({ value: `v${job.version} there`, version: job.version, ms });
    await Bun.sleep(0);
  };
  /** A slow first read here, then the store moves: the get that starts a read elsewhere, and its answer. */
  const readingElsewhere = () => {
    s.readMs = 500;
    reloading.get();
    s.version = 2;
    return reloading.get();
  };
  return { s, reloading, land, readingElsewhere };
}

test('quick reads are made here, at once, each time the version moves, and not when it has not', () => {
  const { s, reloading } = fakeStore();
  expect(reloading.get()).toBe('v1 here');
  expect(reloading.get()).toBe('v1 here');
  s.version = 2;
  expect(reloading.get()).toBe('v2 here');
  expect(s.here).toBe(2);
  expect(s.there).toHaveLength(0);
});

test('after a slow read, the next is made elsewhere and the last value answers until it lands; one read per move', async () => {
  const { s, reloading, land } = fakeStore();
  s.readMs = 500;
  expect(reloading.get()).toBe('v1 here'); // the first read is here, whatever its speed
  s.version = 2;
  expect(reloading.get()).toBe('v1 here');
  expect(reloading.get()).toBe('v1 here');
  expect(s.there).toHaveLength(1); // not one per get
  await land(0, 500);
  expect(reloading.get()).toBe('v2 there');
  s.version = 3;
  expect(reloading.get()).toBe('v2 there');
  expect(s.there).toHaveLength(2);
  await land(1, 5); // quick this time: the next read is made here
  s.version = 4;
  expect(reloading.get()).toBe('v4 here');
  expect(s.here).toBe(2);
});

test('a read elsewhere (a fresh worker, its code cold) counts at half its time: 90 ms there is quick, 110 ms is not', async () => {
  const { s, reloading, land, readingElsewhere } = fakeStore();
  readingElsewhere();
  await land(0, 110);
  s.version = 3;
  expect(reloading.get()).toBe('v2 there'); // 55 ms as if here: slow, elsewhere again
  expect(s.there).toHaveLength(2);
  await land(1, 90);
  s.version = 4;
  s.readMs = 1;
  expect(reloading.get()).toBe('v4 here'); // 45 ms: quick
});

test('a read elsewhere that fails leaves the last value, and the next get reads here', async () => {
  const { s, reloading, readingElsewhere } = fakeStore();
  expect(readingElsewhere()).toBe('v1 here');
  s.there[0]!.reject(new Error('no worker'));
  await Bun.sleep(0);
  expect(reloading.get()).toBe('v2 here');
  expect(s.there).toHaveLength(1);
});

test('force reads here, now; a read elsewhere begun before it never replaces its value', async () => {
  const { s, reloading, land, readingElsewhere } = fakeStore();
  readingElsewhere(); // elsewhere, begun at version 2
  s.version = 3;
  expect(reloading.get(true)).toBe('v3 here');
  await land(0, 500);
  expect(reloading.get()).toBe('v3 here');
});

test('warm makes the first read elsewhere; a get before it lands reads here, and the warm read is then dropped', async () => {
  const { s, reloading, land } = fakeStore();
  const warmed = reloading.warm();
  expect(s.there).toHaveLength(1);
  expect(await reloading.warm()).toEqual({ skipped: true }); // one read at a time
  await land(0, 7);
  expect(await warmed).toEqual({ ms: 7 });
  expect(reloading.get()).toBe('v1 there');
  expect(s.here).toBe(0);
  expect(await reloading.warm()).toEqual({ skipped: true }); // there is a value already

  const failing = fakeStore();
  const failed = failing.reloading.warm();
  failing.s.there[0]!.reject(new Error('no worker'));
  expect(await failed).toEqual({ error: 'no worker' });
  expect(failing.reloading.get()).toBe('v1 here');

  const early = fakeStore();
  early.reloading.warm();
  expect(early.reloading.get()).toBe('v1 here');
  early.s.version = 2;
  await early.land(0); // begun before the read here: dropped
  early.s.version = 1;
  expect(early.reloading.get()).toBe('v1 here');
});

test('without a way to read elsewhere every read is here, and warm does nothing', async () => {
  const { s, reloading } = fakeStore({ elsewhere: false });
  expect(await reloading.warm()).toEqual({ skipped: true });
  s.readMs = 500;
  expect(reloading.get()).toBe('v1 here');
  s.version = 2;
  expect(reloading.get()).toBe('v2 here');
  expect(s.there).toHaveLength(0);
});

test('close cancels a read elsewhere, whose value is then never taken', async () => {
  const { s, reloading, land, readingElsewhere } = fakeStore();
  readingElsewhere();
  reloading.close();
  expect(s.there[0]!.cancelled).toBe(true);
  await land(0);
  expect(reloading.get()).toBe('v1 here'); // not 'v2 there'
});
