import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { describeS3Error } from '../../../src/bucket/s3/client.ts';
import { downloadObject } from '../../../src/bucket/s3/download.ts';
import { placeMirrored } from '../../../src/bucket/s3/mirror-place.ts';
import type { S3BucketSettings } from '../../../src/config/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { S3_CREDENTIALS } from '../../support/s3rver.ts';

// A server that answers GetObject with half the listed bytes and then breaks off in the way the path names:
// s3rver cannot, and these are the ways a real connection ends mid-body. /whole/ sends every byte.
const BODY = Buffer.alloc(1000, 65);
let server: Server;
let client: S3Client;
let dir: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, {
      'content-length': String(BODY.length),
      etag: '"abc"',
      'content-type': 'application/octet-stream',
    });
    if (req.url!.includes('/whole/')) return void res.end(BODY);
    res.write(BODY.subarray(0, 500));
    if (req.url!.includes('/reset/')) setTimeout(() => req.socket.destroy(), 30);
    if (req.url!.includes('/short/')) setTimeout(() => res.socket!.end(), 30); // a clean close, bytes missing
    // /trickle/: a byte every 20 ms, never a stall
    if (req.url!.includes('/trickle/')) {
      const drip = setInterval(() => res.write(BODY.subarray(0, 1)), 20);
      res.on('close', () => clearInterval(drip));
    }
    // /stall/: nothing more, the connection kept open
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
    maxAttempts: 1,
  });
});
afterAll(() => {
  client.destroy();
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const listed = (key: string, size = BODY.length) => ({
  bucket: 'b',
  key,
  etag: '"abc"',
  size,
  lastModified: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
});

test('a whole object lands with its bytes, and the listed LastModified as its mtime', async () => {
  const path = join(dir.path, 'x');
  await downloadObject(client, listed('whole/x.jsonl.gz'), path);
  expect(readFileSync(path).equals(BODY)).toBe(true);
  expect(statSync(path).mtimeMs).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
});

test.each(['reset', 'short'])('a body that breaks off (%s) is an error, not a wait', async (how) => {
  await expect(
    downloadObject(client, listed(`${how}/x.jsonl.gz`), join(dir.path, 'x'), { stallMs: 10_000 }),
  ).rejects.toThrow(`${how}/x.jsonl.gz: the download broke off`);
});

test('a body that stalls is given up after the stall time, saying so', async () => {
  await expect(
    downloadObject(client, listed('stall/x.jsonl.gz'), join(dir.path, 'x'), { stallMs: 300 }),
  ).rejects.toThrow('stall/x.jsonl.gz: no byte arrived for 0.3 s');
});

test('a body that trickles (never a stall, too slow on the whole) is given up once its time at the least rate has passed', async () => {
  // 1000 bytes at 2000 bytes/s at least: 0.5 s, plus the stall time's 0.3 s; the trickle would take 10 s
  await expect(
    downloadObject(client, listed('trickle/x.jsonl.gz'), join(dir.path, 'x'), { stallMs: 300, minBytesPerS: 2000 }),
  ).rejects.toThrow(/^trickle\/x\.jsonl\.gz: \d+ of 1000 bytes arrived in 0\.8 s, slower than 2000 bytes\/s$/);
});

test("a download under way ends when its stop signal fires (the mirror closing), with the stop's reason", async () => {
  const stop = new AbortController();
  setTimeout(() => stop.abort(new Error('the mirror is closing')), 100);
  await expect(
    downloadObject(client, listed('stall/x.jsonl.gz'), join(dir.path, 'x'), { stallMs: 10_000, stop: stop.signal }),
  ).rejects.toThrow('the mirror is closing');
});

test('a local write error is S3_MIRROR_WRITE naming the mirror folder, not the bucket unreachable', async () => {
  const settings = {
    kind: 's3',
    path: join(dir.path, 'mirror'),
    bucket: 'b',
    region: 'us-east-1',
    prefix: '',
    forcePathStyle: true,
    credentialSource: 'x',
    pollMs: 1000,
  } as S3BucketSettings;
  const blocked = join(dir.path, 'a-folder');
  mkdirSync(blocked);
  const e = await downloadObject(client, listed('whole/x.jsonl.gz'), blocked).catch((err: unknown) => err);
  expect(describeS3Error(e, settings)).toMatchObject({ code: 'S3_MIRROR_WRITE' });
  expect(describeS3Error(e, settings).message).toContain(
    `the mirror folder ${settings.path} cannot be written (EISDIR)`,
  );
  expect(describeS3Error(new Error('socket hang up'), settings).code).toBe('S3_UNREACHABLE');
});

test('a body of another length than listed is an error', async () => {
  await expect(downloadObject(client, listed('whole/x.jsonl.gz', 999), join(dir.path, 'x'))).rejects.toThrow(
    '1000 bytes arrived, the listing says 999',
  );
});

test('the kept copy of a replaced object is never overwritten by a rerun that finds the new bytes in place', () => {
  const [root, rel] = [join(dir.path, 'mirror'), 'acme/k.jsonl.gz'];
  mkdirSync(join(root, 'acme'), { recursive: true });
  writeFileSync(join(root, rel), 'v1, applied');
  const tmp = (text: string) => {
    const p = join(dir.path, `tmp-${Math.random()}`);
    writeFileSync(p, text);
    return p;
  };
  expect(placeMirrored(root, rel, tmp('v2'), 'etag-one')).toBeUndefined();
  // the round stopped before its state was saved: the rerun still has etag-one for the file in place (now v2)
  expect(placeMirrored(root, rel, tmp('v2'), 'etag-one')).toBeUndefined();
  expect(readFileSync(join(root, '.superseded', `${rel}.etag-one`), 'utf8')).toBe('v1, applied');
  expect(readFileSync(join(root, rel), 'utf8')).toBe('v2');
  // what the rerun found in place is kept beside it, not deleted (it may have been a version since replaced)
  const kept = readdirSync(join(root, '.superseded', 'acme')).filter((n) => n.startsWith('k.jsonl.gz.etag-one.'));
  expect(kept.map((n) => readFileSync(join(root, '.superseded', 'acme', n), 'utf8'))).toEqual(['v2']);
});

test('a key whose path is too long for the file system is skipped with its reason, not thrown', () => {
  const root = join(dir.path, 'mirror');
  const rel = `acme/${'x'.repeat(300)}.jsonl.gz`;
  const tmp = join(dir.path, 'tmp');
  writeFileSync(tmp, 'bytes');
  expect(placeMirrored(root, rel, tmp, undefined)).toContain('too long for the file system (ENAMETOOLONG)');
  expect(existsSync(tmp)).toBe(false);
});
