import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/base/log.ts';
import { missedFiles, scanBucketFolder, statBucketFile } from '../../src/bucket/index.ts';
import { dumpLine } from '../../src/cli/dump-line.ts';
import { DEFAULT_INGEST } from '../../src/config/index.ts';
import { Ingestor } from '../../src/ingest/index.ts';
import { Store } from '../../src/store/index.ts';
import { gzLines, tempDir, writeDeposit } from '../support/fixtures.ts';

let dir: ReturnType<typeof tempDir>;
let store: Store;
let bucket: string;
let ingestor: Ingestor;

beforeEach(() => {
  dir = tempDir();
  bucket = join(dir.path, 'bucket');
  store = Store.open(join(dir.path, 'db'), 'production', { mapSizeBytes: 1 << 30 });
  ingestor = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme', 'beta']),
    settings: { ...DEFAULT_INGEST, retryBaseMs: 10, maxTries: 3 },
    log: silentLogger,
  });
});
afterEach(async () => {
  await ingestor.close();
  await store.close();
  dir.remove();
});

const dump = () => [...store.liveHoldings()].map((h) => dumpLine(store.env, h));

async function ingest(keys: string[]) {
  await ingestor.submit(keys);
  await ingestor.idle();
}

test('files apply in (LastModified, key) order whatever order they are submitted in', async () => {
  const late = writeDeposit(bucket, 'acme', [{ doi: '10.1234/x', accessType: 'open' }], { mtime: 2000 });
  const early = writeDeposit(bucket, 'acme', [{ doi: '10.1234/x', accessType: 'paid' }], { mtime: 1000 });
  await ingest([late, early]);
  expect(dump()[0]!.accessType).toBe('open');
  expect(store.holdingsOf('10.1234/x')[0]!.events.map((e) => e.newAccess)).toEqual(['paid', 'open']);
});

test('equal LastModified: the key decides the order', async () => {
  const b = writeDeposit(bucket, 'acme', [{ doi: '10.1234/y', accessType: 'free' }], {
    mtime: 1000,
    name: 'b0000000-0000-4000-8000-000000000000.jsonl.gz',
  });
  const a = writeDeposit(bucket, 'acme', [{ doi: '10.1234/y', accessType: 'paid' }], {
    mtime: 1000,
    name: 'a0000000-0000-4000-8000-000000000000.jsonl.gz',
  });
  await ingest([b, a]);
  expect(dump()[0]!.accessType).toBe('free');
});

test('a file with 10,001 records changes nothing and is quarantined', async () => {
  const lines = Array.from({ length: 10_001 }, (_, i) => ({ doi: `10.1234/n${i}`, accessType: 'open' }));
  const key = writeDeposit(bucket, 'acme', lines);
  await ingest([key]);
  expect(dump()).toHaveLength(0);
  expect(store.fileEntry(key)).toMatchObject({ outcome: 'quarantined', code: 'TOO_MANY_RECORDS' });
});

test('a file with one bad line applies the rest and reports the one', async () => {
  const key = writeDeposit(bucket, 'acme', [
    { doi: '10.1234/good1' },
    { doi: '10.1234/bad', accessType: 'gratis' },
    { doi: '10.1234/good2' },
  ]);
  await ingest([key]);
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/good1', '10.1234/good2']);
  const entry = store.fileEntry(key)!;
  expect(entry.counts).toMatchObject({ added: 2, rejected: 1 });
  expect(entry.rejectedLines).toEqual([
    {
      line: 2,
      path: '/accessType',
      code: 'SCHEMA',
      message: 'must be one of paid, open, free, permFree (got "gratis")',
    },
  ]);
});

test('path rules: root-level, nested, unknown platform, wrong extension and names without a UUID are quarantined with a reason', async () => {
  mkdirSync(bucket, { recursive: true });
  writeFileSync(join(bucket, '00000000-0000-4000-8000-00000000abcd.jsonl.gz'), gzLines([{ doi: '10.1234/root' }]));
  const nested = writeDeposit(bucket, 'acme/sub', [{ doi: '10.1234/nested' }]);
  const unknown = writeDeposit(bucket, 'gamma', [{ doi: '10.1234/unknown' }]);
  const ext = writeDeposit(bucket, 'acme', [{ doi: '10.1234/ext' }], {
    name: '00000000-0000-4000-8000-00000000beef.json.gz',
  });
  const noUuid = writeDeposit(bucket, 'acme', [{ doi: '10.1234/nouuid' }], { name: 'holdings-2026.jsonl.gz' });
  await ingest(['00000000-0000-4000-8000-00000000abcd.jsonl.gz', nested, unknown, ext, noUuid]);
  expect(dump()).toHaveLength(0);
  const codes = Object.fromEntries(
    [...store.failures()].map((f) => (f.kind === 'quarantined' ? [f.entry.key, f.entry.code] : ['', ''])),
  );
  expect(codes).toEqual({
    '00000000-0000-4000-8000-00000000abcd.jsonl.gz': 'NOT_IN_PLATFORM_FOLDER',
    [nested]: 'NESTED_PATH',
    [unknown]: 'UNKNOWN_PLATFORM',
    [ext]: 'BAD_EXTENSION',
    [noUuid]: 'NAME_WITHOUT_UUID',
  });
});

test('a key too long to record (deep nesting) is refused once as BAD_PATH and holds back nothing; a name that is not UTF-8 is refused, not taken for gone', async () => {
  const logged: Record<string, unknown>[] = [];
  const log = {
    log: (level: string, event: string, fields: Record<string, unknown>) =>
      void logged.push({ level, event, ...fields }),
  } as unknown as typeof silentLogger;
  const own = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme', 'beta']),
    settings: { ...DEFAULT_INGEST, retryBaseMs: 10, maxTries: 3 },
    log,
  });
  const long = writeDeposit(
    bucket,
    `acme/${Array.from({ length: 5 }, (_, i) => String(i).repeat(250)).join('/')}`,
    [{ doi: '10.1234/deep' }],
    { mtime: 1000 },
  );
  expect(Buffer.byteLength(long)).toBeGreaterThan(1024);
  const good = writeDeposit(bucket, 'beta', [{ doi: '10.1234/after', accessType: 'open' }], { mtime: 2000 });
  // a name with a Latin-1 byte: listed with U+FFFD in its place, a name no file has
  writeFileSync(
    Buffer.concat([
      Buffer.from(`${join(bucket, 'acme')}/caf`),
      Buffer.from([0xe9]),
      Buffer.from('-00000000-0000-4000-8000-000000000777.jsonl.gz'),
    ]),
    gzLines([{ doi: '10.1234/latin1' }]),
  );
  const bad = (await scanBucketFolder(bucket)).find((k) => k.includes('\uFFFD'))!;
  expect(bad).toBeDefined();
  await own.submit([long, good, bad]);
  await own.idle();
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/after']);
  const refused = () => logged.filter((l) => l.event === 'file.unreadable');
  expect(refused().map((l) => [l.key, l.code, l.level])).toEqual([
    [long, 'BAD_PATH', 'error'],
    [bad, 'BAD_PATH', 'error'],
  ]);
  expect(String(refused()[0]!.message)).toContain(
    `the path is ${Buffer.byteLength(long)} bytes long, over the 1024 a key may have`,
  );
  expect(String(refused()[1]!.message)).toContain('not valid UTF-8');
  // a rescan does not hand either on again (nor ask the store about the long key), and neither is said twice
  const rescan = () => missedFiles(bucket, { settleMs: 0, holds: (k, st) => own.holds(k, st) });
  expect(await rescan()).toEqual([]);
  await own.submit([long]);
  await own.idle();
  expect(refused()).toHaveLength(2);
  // one that arrives later, and a folder whose name is not UTF-8, are found by the rescan and refused once
  writeFileSync(
    Buffer.concat([
      Buffer.from(`${join(bucket, 'beta')}/n`),
      Buffer.from([0xf1]),
      Buffer.from('-00000000-0000-4000-8000-000000000778.jsonl.gz'),
    ]),
    gzLines([{ doi: '10.1234/later' }]),
  );
  const folder = Buffer.concat([Buffer.from(`${join(bucket, 'acme')}/sub`), Buffer.from([0xff])]);
  mkdirSync(folder);
  writeFileSync(
    Buffer.concat([folder, Buffer.from('/00000000-0000-4000-8000-000000000779.jsonl.gz')]),
    gzLines([{ doi: '10.1234/deeper' }]),
  );
  const found = await rescan();
  expect(found.sort()).toEqual([`acme/sub\uFFFD`, `beta/n\uFFFD-00000000-0000-4000-8000-000000000778.jsonl.gz`]);
  await own.submit(found);
  await own.idle();
  expect(
    refused()
      .slice(2)
      .map((l) => [l.key, l.code]),
  ).toEqual(found.map((k) => [k, 'BAD_PATH']));
  expect(await rescan()).toEqual([]);
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/after']);
  await own.close();
});

test('a file larger than any gzip of content within the bound is TOO_LARGE without being read, whatever it holds', async () => {
  const own = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme']),
    settings: { ...DEFAULT_INGEST, maxDecompressedBytes: 4096 },
    log: silentLogger,
  });
  // a valid deposit of one record, then 1.1 MiB of zero padding (padding alone is taken: interface.md)
  const padded = writeDeposit(bucket, 'acme', [], {
    bytes: Buffer.concat([gzLines([{ doi: '10.1234/padded', accessType: 'open' }]), Buffer.alloc(1.1 * 1024 * 1024)]),
  });
  const small = writeDeposit(bucket, 'acme', [], {
    bytes: Buffer.concat([gzLines([{ doi: '10.1234/small', accessType: 'open' }]), Buffer.alloc(1000)]),
  });
  await own.submit([padded, small]);
  await own.idle();
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/small']);
  const entry = store.fileEntry(padded)!;
  expect(entry).toMatchObject({ outcome: 'quarantined', code: 'TOO_LARGE' });
  expect(entry.message).toContain(
    `the file is ${Buffer.byteLength(readFileSync(join(bucket, padded)))} bytes, more than a gzip of at most 4096 bytes of content can be`,
  );
  // its identity is still the file's: hashed as a stream
  expect(entry.hash).toBe(new Bun.CryptoHasher('sha256').update(readFileSync(join(bucket, padded))).digest('hex'));
  await own.close();
});

test('the same file seen again is a no-op', async () => {
  const key = writeDeposit(bucket, 'acme', [{ doi: '10.1234/once', accessType: 'paid' }]);
  await ingest([key]);
  await ingest([key]);
  expect(store.fileEntry(key)!.seq).toBe(1);
  expect(ingestor.stats.filesApplied).toBe(1);
});

test('the same key with other content is quarantined as a conflict and not applied', async () => {
  const key = writeDeposit(bucket, 'acme', [{ doi: '10.1234/v1', accessType: 'paid' }], { mtime: 1000 });
  await ingest([key]);
  writeFileSync(join(bucket, key), gzLines([{ doi: '10.1234/v2', accessType: 'open' }]));
  await ingest([key]);
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/v1']);
  expect([...store.failures()].map((f) => [f.kind, f.kind === 'conflict' ? f.conflict.key : ''])).toEqual([
    ['conflict', key],
  ]);
});

test('holds: a file is held once decided (applied, quarantined, a conflict, a duplicate), in the version decided', async () => {
  const applied = writeDeposit(bucket, 'acme', [{ doi: '10.1234/h1', accessType: 'paid' }], { mtime: 1000 });
  const bad = writeDeposit(bucket, 'acme', [], { mtime: 1000, bytes: Buffer.from('not gzip') });
  const unknown = writeDeposit(bucket, 'beta', [{ doi: '10.1234/h2' }], { mtime: 1000 });
  expect(ingestor.holds(applied, await statBucketFile(bucket, applied))).toBe(false);
  await ingest([applied, bad]);
  expect(store.fileEntry(bad)).toMatchObject({ outcome: 'quarantined' });
  for (const key of [applied, bad]) expect(ingestor.holds(key, await statBucketFile(bucket, key))).toBe(true);
  expect(ingestor.holds(unknown, await statBucketFile(bucket, unknown))).toBe(false);
  // the applied key rewritten: a version not decided yet, then a conflict, held in that version only
  writeFileSync(join(bucket, applied), gzLines([{ doi: '10.1234/h1', accessType: 'open' }]));
  utimesSync(join(bucket, applied), 2000, 2000);
  const rewritten = await statBucketFile(bucket, applied);
  expect(ingestor.holds(applied, rewritten)).toBe(false);
  await ingest([applied]);
  expect(ingestor.stats.conflicts).toBe(1);
  expect(ingestor.holds(applied, rewritten)).toBe(true);
  expect(ingestor.holds(applied, { ...rewritten, lastModified: 3_000_000 })).toBe(false);
  // so a folder rescan hands on only the file never submitted
  expect(await missedFiles(bucket, { settleMs: 10, holds: (k, st) => ingestor.holds(k, st) })).toEqual([unknown]);

  // versions whose stat the ledger does not keep: the conflict touched again, and an applied file's same bytes
  // under a new mtime (a duplicate): each read once, then held
  const touched = async (key: string, at: number) => (
    utimesSync(join(bucket, key), at, at), statBucketFile(bucket, key)
  );
  const conflictAgain = await touched(applied, 4000);
  const sameBytes = writeDeposit(bucket, 'beta', [{ doi: '10.1234/h3' }], { mtime: 1000 });
  await ingest([sameBytes]);
  const sameAgain = await touched(sameBytes, 5000);
  expect(ingestor.holds(applied, conflictAgain)).toBe(false);
  expect(ingestor.holds(sameBytes, sameAgain)).toBe(false);
  await ingest([applied, sameBytes]);
  expect(ingestor.stats.conflicts).toBe(2);
  expect(store.fileEntry(sameBytes)!.lastModified).toBe(1_000_000); // the ledger keeps the applied version's
  expect(ingestor.holds(applied, conflictAgain)).toBe(true);
  expect(ingestor.holds(sameBytes, sameAgain)).toBe(true);
  expect(await missedFiles(bucket, { settleMs: 10, holds: (k, st) => ingestor.holds(k, st) })).toEqual([unknown]);
});

test('corrupt and non-gzip files are quarantined; hidden and temp files are ignored', async () => {
  const corrupt = writeDeposit(bucket, 'acme', [], {
    bytes: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff]),
  });
  const plain = writeDeposit(bucket, 'acme', [], { bytes: Buffer.from('{"doi":"10.1234/plain"}\n') });
  const hidden = writeDeposit(bucket, 'acme', [{ doi: '10.1234/hidden' }], {
    name: '.00000000-0000-4000-8000-000000000001.jsonl.gz',
  });
  await ingest([corrupt, plain, hidden]);
  expect(store.fileEntry(corrupt)!.outcome).toBe('quarantined');
  expect(store.fileEntry(plain)).toMatchObject({ outcome: 'quarantined', code: 'NOT_GZIP' });
  expect(store.fileEntry(hidden)).toBeUndefined();
});

test('a truncated gzip (a file still being written) is retried with backoff, then quarantined', async () => {
  const full = gzLines([{ doi: '10.1234/slow' }]);
  const key = writeDeposit(bucket, 'acme', [], { bytes: full.subarray(0, full.length - 6) });
  await ingest([key]);
  expect(ingestor.stats.retries).toBe(2);
  expect(store.fileEntry(key)).toMatchObject({ outcome: 'quarantined', code: 'GZIP_TRUNCATED', tries: 3 });
  expect(store.fileEntry(key)!.message).toEndWith(
    'the gzip stream is truncated (unexpected end of file) (gave up after 3 tries)',
  );
});

test('a truncated file completed before its retry is applied', async () => {
  const full = gzLines([{ doi: '10.1234/finished', accessType: 'open' }]);
  const key = writeDeposit(bucket, 'acme', [], { bytes: full.subarray(0, full.length - 6) });
  await ingestor.submit([key]);
  writeFileSync(join(bucket, key), full);
  await ingestor.idle();
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/finished']);
});

test('queued files are applied in batches, each whole with its own ledger entry', async () => {
  const keys = Array.from({ length: 20 }, (_, i) =>
    writeDeposit(bucket, i % 2 ? 'acme' : 'beta', [{ doi: `10.1234/b${i}` }], { mtime: 1000 + i }),
  );
  await ingest(keys);
  expect(dump()).toHaveLength(20);
  expect(keys.map((k) => store.fileEntry(k)!.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
});

test('a quarantined file deposited again under its key with other content is applied: nothing of the key was', async () => {
  const key = writeDeposit(bucket, 'acme', [], { bytes: Buffer.from('not gzip at all'), mtime: 1000 });
  await ingest([key]);
  expect(store.fileEntry(key)).toMatchObject({ outcome: 'quarantined', code: 'NOT_GZIP' });
  writeDeposit(bucket, 'acme', [{ doi: '10.1234/fixed', accessType: 'open' }], {
    name: key.split('/')[1],
    mtime: 2000,
  });
  await ingest([key]);
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/fixed']);
  expect(store.fileEntry(key)).toMatchObject({ outcome: 'applied' });
  expect([...store.failures()]).toEqual([]);
});

test('a file refused for its path is read and hashed first: its ledger entry knows its content', async () => {
  const key = writeDeposit(bucket, 'gamma', [{ doi: '10.1234/g' }]);
  await ingest([key]);
  const entry = store.fileEntry(key)!;
  expect(entry).toMatchObject({
    outcome: 'quarantined',
    code: 'UNKNOWN_PLATFORM',
    message: `${key}: platform "gamma" is not registered in the config`,
  });
  expect(entry.hash).toBe(
    new Bun.CryptoHasher('sha256').update(await Bun.file(join(bucket, key)).bytes()).digest('hex'),
  );
});

test('every outcome reaches onOutcome once: applied, duplicate (by stat and by content), quarantined, missing', async () => {
  const outcomes: string[] = [];
  const seen = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme']),
    settings: { ...DEFAULT_INGEST, maxTries: 1 },
    log: silentLogger,
    onOutcome: (o) => outcomes.push(o.status),
  });
  try {
    const good = writeDeposit(bucket, 'acme', [{ doi: '10.1234/o' }], { mtime: 1000 });
    const bad = writeDeposit(bucket, 'acme', [], { bytes: Buffer.from('x'), mtime: 1001 });
    await seen.submit([good, bad, 'acme/00000000-0000-4000-8000-0000000000ff.jsonl.gz']);
    await seen.idle();
    outcomes.sort(); // files are reported as they are settled: a quarantine at once, an apply at its commit
    await seen.submit([good]); // same size and LastModified: the shortcut
    await seen.idle();
    utimesSync(join(bucket, good), 3000, 3000); // touched, same content: read, then a duplicate
    await seen.submit([good]);
    await seen.idle();
    expect(outcomes).toEqual(['applied', 'quarantined', 'unread', 'duplicate', 'duplicate']);
  } finally {
    await seen.close();
  }
});

/** Puts a directory where the file was: stat works, reading fails (EISDIR), with the given LastModified. */
function makeUnreadable(key: string, mtime: number): void {
  rmSync(join(bucket, key), { recursive: true });
  mkdirSync(join(bucket, key));
  utimesSync(join(bucket, key), mtime, mtime);
}

test('an applied file that can no longer be read is reported and its applied entry kept: no conflict, no quarantine', async () => {
  const key = writeDeposit(bucket, 'acme', [{ doi: '10.1234/kept', accessType: 'open' }], { mtime: 1000 });
  await ingest([key]);
  const applied = store.fileEntry(key)!;
  makeUnreadable(key, 2000);
  await ingest([key]);
  expect(store.fileEntry(key)).toEqual(applied);
  expect([...store.failures()]).toEqual([]);
  expect(ingestor.stats.conflicts + ingestor.stats.quarantined).toBe(0);
  expect(dump().map((l) => l.doi)).toEqual(['10.1234/kept']);
});

test('a file that stays unreadable is quarantined afresh each time it changes, then skipped until it changes again', async () => {
  const key = writeDeposit(bucket, 'acme', [{ doi: '10.1234/u' }], { mtime: 1000 });
  makeUnreadable(key, 1000);
  await ingest([key]);
  expect(store.fileEntry(key)).toMatchObject({
    outcome: 'quarantined',
    code: 'READ_FAILED',
    hash: '',
    lastModified: 1_000_000,
  });
  makeUnreadable(key, 2000);
  await ingest([key]);
  expect(store.fileEntry(key)).toMatchObject({ outcome: 'quarantined', code: 'READ_FAILED', lastModified: 2_000_000 });
  const retries = ingestor.stats.retries;
  await ingest([key]); // same stat as its entry: not read again
  expect(ingestor.stats.retries).toBe(retries);
  expect(ingestor.stats.quarantined).toBe(2);
});

test('the queue depth goes down as a backlog is applied, not only once it is all done (/healthz, metrics)', async () => {
  const depths: number[] = [];
  const own = new Ingestor({
    env: 'production',
    store,
    root: bucket,
    platforms: new Set(['acme']),
    settings: { ...DEFAULT_INGEST, retryBaseMs: 10, maxTries: 3, passFiles: 2 },
    log: silentLogger,
    onOutcome: () => depths.push(own.stats.queueDepth),
  });
  const keys = Array.from({ length: 8 }, (_, i) =>
    writeDeposit(bucket, 'acme', [{ doi: `10.1234/q${i}` }], { mtime: 1000 + i }),
  );
  await own.submit(keys);
  expect(own.stats.queueDepth).toBe(8);
  await own.idle();
  await own.close();
  expect(depths).toHaveLength(8);
  expect(depths.every((d, i) => i === 0 || d <= depths[i - 1]!)).toBe(true);
  expect(depths.at(-1)).toBeLessThanOrEqual(2);
  expect(own.stats.queueDepth).toBe(0);
});
