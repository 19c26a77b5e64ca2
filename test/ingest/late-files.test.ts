import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/base/log.ts';
import { dumpLine } from '../../src/cli/dump-line.ts';
import { DEFAULT_INGEST } from '../../src/config/index.ts';
import { type IngestOutcome, Ingestor, InlinePreparer } from '../../src/ingest/index.ts';
import { doiKeysOf, Store } from '../../src/store/index.ts';
import { gzLines, tempDir, waitFor, writeDeposit } from '../support/fixtures.ts';

/**
 * Late files (src/store/apply/late-files.ts, src/ingest/read-later-files.ts): a file that comes after files which follow it in
 * (LastModified, key) order leaves what they decided, so the store ends as if the files had come in order.
 */

let dir: ReturnType<typeof tempDir>;
let bucket: string;
const opened: { store: Store; ingestor: Ingestor; outcomes: IngestOutcome[] }[] = [];

beforeEach(() => {
  dir = tempDir();
  bucket = join(dir.path, 'bucket');
});
afterEach(async () => {
  for (const { store, ingestor } of opened.splice(0)) {
    await ingestor.close();
    await store.close();
  }
  dir.remove();
});

/** A store with its own ingestor over the shared bucket folder (the worker preparer, as the daemon has it). */
function replica(name: string, maxTries = 3) {
  const store = Store.open(join(dir.path, name), 'production', { mapSizeBytes: 1 << 30 });
  const outcomes: IngestOutcome[] = [];
  const ingestor = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme', 'beta']),
    settings: { ...DEFAULT_INGEST, retryBaseMs: 10, maxTries },
    log: silentLogger,
    onOutcome: (o) => outcomes.push(o),
  });
  const r = { store, ingestor, outcomes };
  opened.push(r);
  return r;
}

async function ingest(r: ReturnType<typeof replica>, keys: string[]) {
  await r.ingestor.submit(keys);
  await r.ingestor.idle();
}

const dump = (store: Store, withUpdated = true) =>
  [...store.liveHoldings()].map((h) =>
    JSON.stringify({ ...dumpLine(store.env, h), updated: withUpdated ? dumpLine(store.env, h).updated : undefined }),
  );
const access = (store: Store) =>
  Object.fromEntries([...store.liveHoldings()].map((h) => [`${h.platform}:${h.doiKey}`, h.state.accessType]));

/** W, then X and Y with X before Y in apply order; Y's records for g (equal to what W left) and f (a no-op removal) change nothing. */
function threeFiles() {
  const w = writeDeposit(
    bucket,
    'acme',
    [
      { doi: '10.1234/g', accessType: 'paid' },
      { doi: '10.1234/d', accessType: 'paid' },
    ],
    { mtime: 500 },
  );
  const x = writeDeposit(
    bucket,
    'acme',
    [
      { doi: '10.1234/d', accessType: 'free' },
      { doi: '10.1234/g', accessType: 'open' },
      { doi: '10.1234/f', accessType: 'open' },
      { doi: '10.1234/e', accessType: 'open' },
      { doi: '10.1234/h', deleted: true },
    ],
    { mtime: 2000 },
  );
  const y = writeDeposit(
    bucket,
    'acme',
    [
      { doi: '10.1234/d', accessType: 'open' },
      { doi: '10.1234/g', accessType: 'paid' },
      { doi: '10.1234/f', deleted: true },
      { doi: '10.1234/h', accessType: 'paid' },
    ],
    { mtime: 3000 },
  );
  // another platform's later file never holds back this platform's records
  const z = writeDeposit(bucket, 'beta', [{ doi: '10.1234/e', accessType: 'paid' }], { mtime: 9000 });
  return { w, x, y, z };
}

test('a late file leaves what the later files decided, changed or not, and applies the rest: the store ends as in order', async () => {
  const { w, x, y, z } = threeFiles();
  const late = replica('late');
  const told: string[][] = [];
  late.store.onApplied((files) => told.push(...files.map((f) => [...doiKeysOf(f)])));
  await ingest(late, [w, y, z]);
  told.length = 0;
  await ingest(late, [x]);

  expect(access(late.store)).toEqual({
    'acme:10.1234/d': 'open',
    'acme:10.1234/e': 'open',
    'acme:10.1234/g': 'paid',
    'acme:10.1234/h': 'paid',
    'beta:10.1234/e': 'paid',
  });
  const applied = late.outcomes.at(-1)!;
  expect(applied.status).toBe('applied');
  if (applied.status !== 'applied') return;
  expect(applied.entry.key).toBe(x);
  expect(applied.entry.counts).toMatchObject({ records: 5, added: 1, overtaken: 4, updated: 0, removed: 0 });
  expect(late.ingestor.stats.records).toMatchObject({ overtaken: 4 }); // /metrics: doi_holdings_records_total{outcome="overtaken"}
  // the read models hear only what the store applied
  expect(told).toEqual([['10.1234/e']]);
  // no history event for the records left out
  expect(late.store.holdingsOf('10.1234/g')[0]!.events.map((e) => e.kind)).toEqual(['added']);

  // the same holdings as a replica that had the files in order; `updated` aside: there X changed g and Y changed
  // it back, here nothing changed g after W (docs/design.md, "Apply order and replica convergence")
  const inOrder = replica('in-order');
  await ingest(inOrder, [w, x, y, z]);
  expect(dump(late.store, false)).toEqual(dump(inOrder.store, false));
  const updated = (s: Store) => [...s.liveHoldings({ doiKey: '10.1234/g' })][0]!.updated;
  expect([updated(late.store), updated(inOrder.store)]).toEqual([500_000, 3_000_000]);
  expect(inOrder.outcomes.every((o) => o.status !== 'applied' || o.entry.counts!.overtaken === undefined)).toBe(true);
});

test('a late file whose later file is gone from the bucket is quarantined LATER_FILE_UNREADABLE at once (no try can bring it back); nothing of it applied', async () => {
  const { w, x, y } = threeFiles();
  const r = replica('r', 3);
  await ingest(r, [w, y]);
  const before = dump(r.store);
  rmSync(join(bucket, y));
  await ingest(r, [x]);
  expect(dump(r.store)).toEqual(before);
  const q = r.outcomes.at(-1)!;
  expect(q.status).toBe('quarantined');
  if (q.status !== 'quarantined') return;
  expect(q.entry).toMatchObject({ key: x, code: 'LATER_FILE_UNREADABLE', tries: 1 });
  expect(q.entry.message).toContain(`${x} (LastModified 1970-01-01T00:33:20.000Z) comes before ${y}`);
  expect(q.entry.message).toContain('it is no longer in the bucket folder');
  expect(r.ingestor.stats.retries).toBe(0);
});

test('a later file that cannot be read for now (a read error) is tried again, and the late file applies once it can', async () => {
  const { w, x, y } = threeFiles();
  const r = replica('r', 5);
  await ingest(r, [w, y]);
  const bytes = readFileSync(join(bucket, y));
  rmSync(join(bucket, y));
  mkdirSync(join(bucket, y)); // reading a folder fails (EISDIR): READ_FAILED, as a disk error would
  await r.ingestor.submit([x]);
  await waitFor(() => r.ingestor.stats.retries > 0, 'a retry of the late file');
  rmSync(join(bucket, y), { recursive: true });
  writeFileSync(join(bucket, y), bytes);
  utimesSync(join(bucket, y), 3000, 3000);
  await r.ingestor.idle();
  const applied = r.outcomes.at(-1)!;
  expect(applied.status === 'applied' && applied.entry.counts).toMatchObject({ added: 1, overtaken: 4 });
});

test('two late files in one batch, the first kept for a retry: the second goes back in the queue, none dropped', async () => {
  const { w, x, y } = threeFiles();
  const r = replica('r', 2);
  const unreadable = writeDeposit(bucket, 'beta', [{ doi: '10.1234/q', accessType: 'open' }], { mtime: 4000 });
  await ingest(r, [w, y, unreadable]);
  rmSync(join(bucket, unreadable));
  mkdirSync(join(bucket, unreadable)); // READ_FAILED: the first late file is tried again
  const lateBeta = writeDeposit(bucket, 'beta', [{ doi: '10.1234/q', accessType: 'paid' }], { mtime: 1000 });
  await ingest(r, [lateBeta, x]); // one batch, in apply order: lateBeta (1000), then x (2000)
  const last = new Map(
    r.outcomes.map((o) => [o.status === 'applied' || o.status === 'quarantined' ? o.entry.key : '', o]),
  );
  expect(last.get(lateBeta)).toMatchObject({
    status: 'quarantined',
    entry: { code: 'LATER_FILE_UNREADABLE', tries: 2 },
  });
  expect(last.get(x)).toMatchObject({ status: 'applied', entry: { counts: { added: 1, overtaken: 4 } } });
  expect(access(r.store)).toMatchObject({ 'acme:10.1234/e': 'open', 'beta:10.1234/q': 'open' });
});

test('a later file replaced in the S3 mirror is read back from .superseded/, where the mirror keeps the applied bytes', async () => {
  const { w, x, y } = threeFiles();
  const r = replica('r', 1);
  await ingest(r, [w, y]);
  // as bucket/s3/mirror-place.ts keeps the copy a same-key upload replaced
  mkdirSync(join(bucket, '.superseded', 'acme'), { recursive: true });
  renameSync(join(bucket, y), join(bucket, '.superseded', `${y}.0123abcd`));
  writeFileSync(join(bucket, y), gzLines([{ doi: '10.1234/other' }]));
  await ingest(r, [x]);
  const applied = r.outcomes.at(-1)!;
  expect(applied.status === 'applied' && applied.entry.counts).toMatchObject({ added: 1, overtaken: 4 });
});

test('a later file that --ingest read from another folder is read back from there (its ledger entry names it)', async () => {
  const outbox = join(dir.path, 'outbox');
  const y = writeDeposit(outbox, 'acme', [{ doi: '10.1234/d', accessType: 'open' }], { mtime: 3000 });
  const r = replica('r', 1);
  const settings = { ...DEFAULT_INGEST, maxTries: 1 };
  const cli = new Ingestor({
    env: 'production',
    store: r.store,
    root: outbox,
    platforms: new Set(['acme']),
    settings,
    log: silentLogger,
    inOrderGiven: true,
    preparer: new InlinePreparer(),
  });
  await cli.submit([y]);
  await cli.idle();
  await cli.close();
  expect(r.store.fileEntry(y)!.readFrom).toBe(outbox);
  const x = writeDeposit(
    bucket,
    'acme',
    [
      { doi: '10.1234/d', accessType: 'free' },
      { doi: '10.1234/e', accessType: 'open' },
    ],
    { mtime: 2000 },
  );
  await ingest(r, [x]);
  expect(access(r.store)).toEqual({ 'acme:10.1234/d': 'open', 'acme:10.1234/e': 'open' });
});

test('a later file whose content changed since it was applied cannot answer for it either', async () => {
  const { w, x, y } = threeFiles();
  const r = replica('r', 1);
  await ingest(r, [w, y]);
  writeFileSync(join(bucket, y), gzLines([{ doi: '10.1234/other' }]));
  utimesSync(join(bucket, y), 3000, 3000);
  await ingest(r, [x]);
  const q = r.outcomes.at(-1)!;
  expect(q.status).toBe('quarantined');
  if (q.status !== 'quarantined') return;
  expect(q.entry.code).toBe('LATER_FILE_UNREADABLE');
  expect(q.entry.message).toContain('its content changed since it was applied');
  expect(access(r.store)['acme:10.1234/e']).toBeUndefined();
});

test('a file in its place, or later than every applied file of its platform, is applied whole', async () => {
  const { w, x } = threeFiles();
  const r = replica('r');
  await ingest(r, [w, x]);
  const applied = r.outcomes.filter((o) => o.status === 'applied');
  expect(applied).toHaveLength(2);
  const counts = applied[1]!.status === 'applied' ? applied[1]!.entry.counts! : undefined;
  expect(counts).toMatchObject({ added: 2, updated: 2, noopRemovals: 1 });
  expect(counts!.overtaken).toBeUndefined();
});
