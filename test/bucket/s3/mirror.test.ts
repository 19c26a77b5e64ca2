import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { silentLogger } from '../../../src/base/log.ts';
import { S3Mirror, SAME_SECOND_GUARD_MS } from '../../../src/bucket/index.ts';
import type { S3BucketSettings } from '../../../src/config/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../../support/s3rver.ts';

let s3: S3Server;
let dir: ReturnType<typeof tempDir>;
let bucketNo = 0;
let bucket: string;
const mirrors: S3Mirror[] = [];
/** the ingest's default bound on a file's content (ingest.maxDecompressedBytes) */
const DEPOSIT_BOUND = 64 * 1024 * 1024;

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3.dispose();
});
beforeEach(async () => {
  dir = tempDir();
  bucket = `mirror-test-${++bucketNo}`;
  await s3.createBucket(bucket);
});
afterEach(async () => {
  await Promise.all(mirrors.splice(0).map((m) => m.close()));
  dir.remove();
});

function settings(extra: Partial<S3BucketSettings> = {}): S3BucketSettings {
  return {
    kind: 's3',
    path: join(dir.path, 'mirror'),
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket,
    prefix: '',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
    credentialSource: 'TEST_KEY_ID/TEST_SECRET',
    pollMs: 200,
    ...extra,
  };
}

function mirror(extra: Partial<S3BucketSettings> = {}, onChange?: (keys: string[]) => void): S3Mirror {
  const m = new S3Mirror({
    settings: settings(extra),
    log: silentLogger,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    onChange,
  });
  mirrors.push(m);
  return m;
}

/** A client that counts the GetObject calls of each key. */
async function countingClient() {
  const { S3Client, GetObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
  });
  const gets = new Map<string, number>();
  const send = client.send.bind(client);
  client.send = ((command: { input?: { Key?: string } }, ...rest: unknown[]) => {
    if (command instanceof GetObjectCommand) gets.set(command.input.Key!, (gets.get(command.input.Key!) ?? 0) + 1);
    return (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
  }) as typeof client.send;
  return { client, gets };
}

/** Syncs until `n` objects were downloaded in total (objects uploaded this second wait for the next round). */
async function syncUntil(m: S3Mirror, n: number): Promise<string[]> {
  const got: string[] = [];
  await waitFor(async () => {
    got.push(...(await m.syncOnce()).downloaded);
    return got.length >= n;
  }, `${n} downloads`);
  return got;
}

test('objects are mirrored with their content and LastModified as mtime; a second sync downloads nothing', async () => {
  await s3.put(bucket, 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz', 'one');
  await s3.put(bucket, 'acme/00000000-0000-4000-8000-000000000002.jsonl.gz', 'two');
  const m = mirror();
  expect((await syncUntil(m, 2)).sort()).toEqual([
    'acme/00000000-0000-4000-8000-000000000001.jsonl.gz',
    'acme/00000000-0000-4000-8000-000000000002.jsonl.gz',
  ]);
  const path = join(settings().path, 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz');
  expect(readFileSync(path, 'utf8')).toBe('one');
  const head = await s3.client.send(
    new HeadObjectCommand({ Bucket: bucket, Key: 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz' }),
  );
  expect(Math.floor(statSync(path).mtimeMs)).toBe(head.LastModified!.getTime());
  expect((await m.syncOnce()).downloaded).toEqual([]);
});

test('a re-upload of a key with other content is mirrored and the old copy is kept under .superseded', async () => {
  const key = 'acme/00000000-0000-4000-8000-000000000003.jsonl.gz';
  await s3.put(bucket, key, 'first');
  const m = mirror();
  await syncUntil(m, 1);
  await s3.put(bucket, key, 'second version');
  await syncUntil(m, 1);
  expect(readFileSync(join(settings().path, key), 'utf8')).toBe('second version');
  const kept = readdirSync(join(settings().path, '.superseded', 'acme'));
  expect(kept).toHaveLength(1);
  expect(readFileSync(join(settings().path, '.superseded', 'acme', kept[0]!), 'utf8')).toBe('first');
});

test('an object deleted from the bucket stays in the mirror', async () => {
  const key = 'acme/00000000-0000-4000-8000-000000000004.jsonl.gz';
  await s3.put(bucket, key, 'keep me');
  const m = mirror();
  await syncUntil(m, 1);
  await s3.remove(bucket, key);
  await m.syncOnce();
  expect(readFileSync(join(settings().path, key), 'utf8')).toBe('keep me');
});

test('a 0-byte object and a root-level object are mirrored as they are (ingestion judges them)', async () => {
  await s3.put(bucket, 'acme/00000000-0000-4000-8000-000000000005.jsonl.gz', '');
  await s3.put(bucket, 'stray.txt', 'x');
  const m = mirror();
  await syncUntil(m, 2);
  expect(statSync(join(settings().path, 'acme/00000000-0000-4000-8000-000000000005.jsonl.gz')).size).toBe(0);
  expect(existsSync(join(settings().path, 'stray.txt'))).toBe(true);
});

test('only keys under the prefix are mirrored, without the prefix', async () => {
  await s3.put(bucket, 'deposits/acme/00000000-0000-4000-8000-000000000006.jsonl.gz', 'in');
  await s3.put(bucket, 'elsewhere/acme/00000000-0000-4000-8000-000000000007.jsonl.gz', 'out');
  const m = mirror({ prefix: 'deposits/' });
  expect(await syncUntil(m, 1)).toEqual(['acme/00000000-0000-4000-8000-000000000006.jsonl.gz']);
  expect(existsSync(join(settings().path, 'elsewhere'))).toBe(false);
});

test('bad credentials give an error naming the bucket and the credential source', async () => {
  await s3.put(bucket, 'acme/00000000-0000-4000-8000-000000000008.jsonl.gz', 'x');
  const m = mirror({ credentials: { accessKeyId: 'WRONG', secretAccessKey: 'WRONG' } });
  await expect(m.syncOnce()).rejects.toThrow();
  expect(m.lastError!.code).toBe('S3_CREDENTIALS');
  expect(m.lastError!.message).toContain(`S3 bucket "${bucket}"`);
  expect(m.lastError!.message).toContain('TEST_KEY_ID/TEST_SECRET');
});

test('the server going away fails a sync without partial files; the loop recovers when it is back', async () => {
  const keys = Array.from({ length: 5 }, (_, i) => `acme/00000000-0000-4000-8000-00000000010${i}.jsonl.gz`);
  for (const k of keys) await s3.put(bucket, k, `content ${k}`);
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100); // past the same-second guard, so the first round takes all of them
  await s3.stop();
  const seen: string[] = [];
  const m = mirror({}, (k) => void seen.push(...k));
  await expect(m.syncOnce()).rejects.toThrow();
  expect(m.lastError!.code).toBe('S3_UNREACHABLE');
  expect(existsSync(join(settings().path, 'acme'))).toBe(false);
  m.start(); // the loop keeps retrying with backoff
  await Bun.sleep(300);
  await s3.restart();
  await waitFor(() => seen.length === 5, 'all five mirrored after the restart', 20_000);
  expect(m.lastError).toBeUndefined();
  for (const k of keys) expect(readFileSync(join(settings().path, k), 'utf8')).toBe(`content ${k}`);
  expect(readdirSync(join(settings().path, '.s3-partial'))).toEqual([]);
});

test('a mirror state that cannot be written: the objects put in place are handed on all the same, and rounds fail until it is written', async () => {
  const key = 'acme/00000000-0000-4000-8000-000000000201.jsonl.gz';
  await s3.put(bucket, key, 'content');
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100);
  const blocked = join(settings().path, '.s3-mirror-state.json.tmp');
  mkdirSync(blocked, { recursive: true }); // as a full disk would: the state's temporary file cannot be written
  const seen: string[] = [];
  const m = mirror({}, (k) => void seen.push(...k));
  await expect(m.syncOnce()).rejects.toThrow('cannot write the mirror state');
  expect(seen).toEqual([key]);
  expect(m.lastError!.code).toBe('S3_MIRROR_WRITE'); // the local side, not the bucket
  await expect(m.syncOnce()).rejects.toThrow('cannot write the mirror state');
  rmSync(blocked, { recursive: true });
  expect((await m.syncOnce()).downloaded).toEqual([]);
  expect(Object.keys(JSON.parse(readFileSync(join(settings().path, '.s3-mirror-state.json'), 'utf8')))).toEqual([key]);
  expect(seen).toEqual([key]);
});

test('files are handed on in (LastModified, key) order, and never ahead of an earlier one whose download failed', async () => {
  // three objects in three different seconds: apply order c, a, b (LastModified), not key order
  const keys = [
    'acme/00000000-0000-4000-8000-00000000000c.jsonl.gz',
    'acme/00000000-0000-4000-8000-00000000000a.jsonl.gz',
    'acme/00000000-0000-4000-8000-00000000000b.jsonl.gz',
  ];
  for (const k of keys) {
    await s3.put(bucket, k, k);
    await Bun.sleep(1050);
  }
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100); // past the same-second guard for the last one
  // a client whose first GetObject of the middle file fails
  const { S3Client, GetObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
  });
  let failed = false;
  const send = client.send.bind(client);
  client.send = ((command: { input?: { Key?: string } }, ...rest: unknown[]) => {
    if (command instanceof GetObjectCommand && command.input.Key === keys[1] && !failed) {
      failed = true;
      return Promise.reject(Object.assign(new Error('connection reset'), { name: 'ECONNRESET' }));
    }
    return (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
  }) as typeof client.send;
  const handed: string[][] = [];
  const m = new S3Mirror({
    settings: settings(),
    log: silentLogger,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    client,
    onChange: (k) => void handed.push(k),
  });
  mirrors.push(m);

  await expect(m.syncOnce()).rejects.toThrow('connection reset');
  // only the file before the failed one; the one after it is not in place either
  expect(handed.flat()).toEqual([keys[0]]);
  expect(existsSync(join(settings().path, keys[2]!))).toBe(false);
  expect(readdirSync(join(settings().path, '.s3-partial'))).toEqual([]);

  const second = await m.syncOnce();
  expect(second.downloaded).toEqual([keys[1], keys[2]]);
  expect(handed.flat()).toEqual(keys);
});

test('an object listed after later ones were put in place is applied, and said to be late (s3.late_object)', async () => {
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => `acme/00000000-0000-4000-8000-00000000020${x}.jsonl.gz`);
  await s3.put(bucket, a!, 'a');
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100);
  // a client whose listings show b five seconds older than a: as a long upload, stamped when it began, shows late
  const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
  });
  let aAt = 0;
  const send = client.send.bind(client) as (...a: unknown[]) => Promise<unknown>;
  client.send = (async (command: unknown, ...rest: unknown[]) => {
    const out = await send(command, ...rest);
    if (command instanceof ListObjectsV2Command)
      for (const o of (out as { Contents?: { Key?: string; LastModified?: Date }[] }).Contents ?? []) {
        if (o.Key === a) aAt = o.LastModified!.getTime();
        if (o.Key === b || o.Key === d) o.LastModified = new Date(aAt - 5000);
      }
    return out;
  }) as typeof client.send;
  const lines: { event: string; fields?: Record<string, unknown> }[] = [];
  const log = {
    log: (_: unknown, event: string, fields?: Record<string, unknown>) => void lines.push({ event, fields }),
  };
  const handed: string[] = [];
  const m = new S3Mirror({
    settings: settings(),
    log,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    client,
    onChange: (k) => void handed.push(...k),
  });
  mirrors.push(m);
  await m.syncOnce();
  expect(handed).toEqual([a]);

  await s3.put(bucket, b!, 'b');
  await m.syncOnce();
  expect(handed).toEqual([a, b]);
  const late = lines.filter((l) => l.event === 's3.late_object');
  expect(late).toHaveLength(1);
  expect(late[0]!.fields).toMatchObject({
    env: 'production',
    key: b,
    after: a,
    lastModified: new Date(aAt - 5000).toISOString(),
  });

  // in order again: nothing said
  await s3.put(bucket, c!, 'c');
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100);
  await m.syncOnce();
  expect(handed).toEqual([a, b, c]);
  expect(lines.filter((l) => l.event === 's3.late_object')).toHaveLength(1);

  // a mirror started again over this folder knows what is in place (from its state file)
  await m.close();
  const again = new S3Mirror({
    settings: settings(),
    log,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    client,
    onChange: (k) => void handed.push(...k),
  });
  mirrors.push(again);
  await s3.put(bucket, d!, 'd');
  await again.syncOnce();
  expect(handed).toEqual([a, b, c, d]);
  expect(lines.filter((l) => l.event === 's3.late_object').map((l) => [l.fields!.key, l.fields!.after])).toEqual([
    [b, a],
    [d, c],
  ]);
});

test("a key re-uploaded whose kept copy's name would be too long is skipped once, not fetched again every round", async () => {
  const { client, gets } = await countingClient();
  const logged: Record<string, unknown>[] = [];
  const log = {
    log: (_level: string, event: string, fields: Record<string, unknown>) => void logged.push({ event, ...fields }),
  } as unknown as typeof silentLogger;
  const m = new S3Mirror({
    settings: settings(),
    log,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    client,
  });
  mirrors.push(m);
  // a 230-byte name: its kept copy, `<name>.<etag>` under .superseded/, is over the 255 bytes a name may have
  const key = `acme/${'a'.repeat(221)}.jsonl.gz`;
  await s3.put(bucket, key, 'first');
  expect(await syncUntil(m, 1)).toEqual([key]);
  await s3.put(bucket, key, 'second, longer');
  await Bun.sleep(SAME_SECOND_GUARD_MS + 1100);
  await m.syncOnce();
  expect(logged.filter((l) => l.event === 's3.key_skipped').map((l) => [l.key, l.code])).toEqual([[key, 'PATH_CLASH']]);
  const fetched = gets.get(key);
  await m.syncOnce();
  await m.syncOnce();
  expect(gets.get(key)).toBe(fetched);
  expect(readFileSync(join(settings().path, key), 'utf8')).toBe('first');
  expect(logged.some((l) => l.event === 's3.sync_failed')).toBe(false);
});

test('a key that clashes with another as file and folder is skipped and said (PATH_CLASH); it holds back nothing after it, round after round', async () => {
  const logged: Record<string, unknown>[] = [];
  const log = {
    log: (_level: string, event: string, fields: Record<string, unknown>) => void logged.push({ event, ...fields }),
  } as unknown as typeof silentLogger;
  const { client, gets } = await countingClient();
  const m = new S3Mirror({
    settings: settings(),
    log,
    envName: 'production',
    maxDecompressedBytes: DEPOSIT_BOUND,
    client,
  });
  mirrors.push(m);
  // a file, then a key that needs that file's name as a folder; then a folder, then a file of that folder's name
  await s3.put(bucket, 'acme/a.jsonl.gz', 'a file');
  await s3.put(bucket, 'acme/a.jsonl.gz/b.jsonl.gz', 'under a file');
  await s3.put(bucket, 'acme/d/e.jsonl.gz', 'in a folder');
  await Bun.sleep(1100); // a later second: 'acme/d' sorts after the folder's file
  await s3.put(bucket, 'acme/d', 'a file over a folder');
  await s3.put(bucket, 'acme/z.jsonl.gz', 'after them all');
  const got = await syncUntil(m, 3);
  expect(got.sort()).toEqual(['acme/a.jsonl.gz', 'acme/d/e.jsonl.gz', 'acme/z.jsonl.gz']);
  expect(readFileSync(join(settings().path, 'acme/z.jsonl.gz'), 'utf8')).toBe('after them all');
  const skipped = logged.filter((l) => l.event === 's3.key_skipped');
  expect(skipped.map((l) => [l.key, l.code]).sort()).toEqual([
    ['acme/a.jsonl.gz/b.jsonl.gz', 'PATH_CLASH'],
    ['acme/d', 'PATH_CLASH'],
  ]);
  expect(logged.some((l) => l.event === 's3.sync_failed')).toBe(false);
  // the next rounds fail neither, say nothing more, and fetch neither again
  const fetched = new Map(gets);
  await m.syncOnce();
  await m.syncOnce();
  expect(logged.filter((l) => l.event === 's3.key_skipped')).toHaveLength(2);
  expect(logged.some((l) => l.event === 's3.sync_failed')).toBe(false);
  expect(gets).toEqual(fetched);
  expect(gets.get('acme/d')).toBe(1);
  // new bytes under a clashing key are fetched once more (they still clash: skipped again, the rest unharmed)
  await s3.put(bucket, 'acme/d', 'a longer file over a folder');
  await Bun.sleep(SAME_SECOND_GUARD_MS + 1100);
  await m.syncOnce();
  await m.syncOnce();
  expect(gets.get('acme/d')).toBe(2);
  expect(logged.some((l) => l.event === 's3.sync_failed')).toBe(false);
  expect(
    existsSync(join(settings().path, '.s3-partial')) ? readdirSync(join(settings().path, '.s3-partial')) : [],
  ).toEqual([]);
});

test("an object larger than any deposit can be is not downloaded: said (TOO_LARGE) once, holding back nothing; new bytes of a deposit's size are", async () => {
  const logged: Record<string, unknown>[] = [];
  const log = {
    log: (_level: string, event: string, fields: Record<string, unknown>) => void logged.push({ event, ...fields }),
  } as unknown as typeof silentLogger;
  const { client, gets } = await countingClient();
  // a bound of 1 KiB of content: a gzip of it is at most 1,049,616 bytes (1 KiB, a 64th more and 1 MiB)
  const m = new S3Mirror({ settings: settings(), log, envName: 'production', maxDecompressedBytes: 1024, client });
  mirrors.push(m);
  const big = 'acme/00000000-0000-4000-8000-00000000000b.jsonl.gz';
  await s3.put(bucket, big, 'x'.repeat(1_049_617));
  await s3.put(bucket, 'acme/00000000-0000-4000-8000-00000000000c.jsonl.gz', 'a deposit after it');
  expect(await syncUntil(m, 1)).toEqual(['acme/00000000-0000-4000-8000-00000000000c.jsonl.gz']);
  await m.syncOnce();
  expect(gets.get(big)).toBeUndefined();
  expect(existsSync(join(settings().path, big))).toBe(false);
  const skipped = logged.filter((l) => l.event === 's3.key_skipped');
  expect(skipped.map((l) => [l.key, l.code])).toEqual([[big, 'TOO_LARGE']]);
  expect([...m.skipped]).toEqual([['TOO_LARGE', 1]]); // /metrics: doi_holdings_s3_keys_skipped_total
  expect(skipped[0]!.why).toBe(
    `${big}: the file is 1049617 bytes, more than a gzip of at most 1024 bytes of content can be (1049616); it is not read; not mirrored`,
  );
  // the same key uploaded again at a size a deposit can be: downloaded like any other
  await s3.put(bucket, big, 'now small');
  expect(await syncUntil(m, 1)).toEqual([big]);
  expect(readFileSync(join(settings().path, big), 'utf8')).toBe('now small');
  expect(logged.some((l) => l.event === 's3.sync_failed')).toBe(false);
});
