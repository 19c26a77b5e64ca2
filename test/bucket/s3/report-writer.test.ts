import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Logger } from '../../../src/base/index.ts';
import { ReportWriter, s3ClientFor } from '../../../src/bucket/index.ts';
import { listBucket } from '../../../src/bucket/s3/listing.ts';
import type { S3BucketSettings } from '../../../src/config/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../../support/s3rver.ts';

/** Reports written back into the bucket (`[buckets.*] reports`), against s3rver: the real AWS SDK, a real server. */

let s3: S3Server;
let dir: ReturnType<typeof tempDir>;
let bucketNo = 0;
const writers: ReportWriter[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
  dir = tempDir();
});
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close()));
});
afterAll(async () => {
  await s3.dispose();
  dir.remove();
});

function settings(bucket: string, prefix = ''): S3BucketSettings {
  return {
    kind: 's3',
    path: join(dir.path, 'mirror'),
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket,
    prefix,
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
    credentialSource: 'TEST_KEY_ID/TEST_SECRET',
    pollMs: 200,
    reports: true,
  };
}

/** A logger that keeps what it is told and tells a waiter of each event. */
function recorder() {
  const events: { event: string; fields?: Record<string, unknown> }[] = [];
  let waiter: { event: string; resolve: () => void } | undefined;
  const log: Logger = {
    log(_level, event, fields) {
      events.push({ event, fields });
      if (waiter?.event === event) waiter.resolve();
    },
  };
  const next = (event: string) => new Promise<void>((resolve) => (waiter = { event, resolve }));
  return { log, events, next };
}

async function read(bucket: string, key: string): Promise<string> {
  const r = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return r.Body!.transformToString();
}

test('each report lands as reports/<platform>/<name>.json under the prefix, the name whole; a later one replaces a waiting one', async () => {
  const bucket = `reports-${++bucketNo}`;
  await s3.createBucket(bucket);
  const s = settings(bucket, 'deposits/');
  const w = new ReportWriter(s3ClientFor(s), s, recorder().log);
  writers.push(w);
  const key = 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz';
  expect(w.objectKey(key)).toBe('deposits/reports/acme/00000000-0000-4000-8000-000000000001.jsonl.gz.json');
  // two files of a platform have two reports, whatever their names (a quarantined one may lack .jsonl.gz)
  expect(w.objectKey('acme/x')).not.toBe(w.objectKey('acme/x.jsonl.gz'));
  w.write(key, '{"outcome":"quarantined"}');
  w.write(key, '{"outcome":"applied"}');
  w.write('beta/b.jsonl.gz', '{"key":"beta/b.jsonl.gz"}');
  await w.idle();
  expect(await read(bucket, w.objectKey(key))).toBe('{"outcome":"applied"}');
  expect(await read(bucket, 'deposits/reports/beta/b.jsonl.gz.json')).toBe('{"key":"beta/b.jsonl.gz"}');
});

test('a failed write is logged and retried until it succeeds: the bucket missing, then made', async () => {
  const bucket = `reports-${++bucketNo}`;
  const s = settings(bucket);
  const r = recorder();
  const w = new ReportWriter(s3ClientFor(s), s, r.log, { firstMs: 20, maxMs: 100 });
  writers.push(w);
  const failed = r.next('s3.report_write_failed');
  w.write('acme/a.jsonl.gz', '{"n":1}'); // returns at once: ingestion never waits for the bucket
  await failed;
  expect(r.events[0]!.fields).toMatchObject({ key: 'reports/acme/a.jsonl.gz.json', code: 'S3_NO_SUCH_BUCKET' });
  await s3.createBucket(bucket);
  await w.idle();
  expect(await read(bucket, 'reports/acme/a.jsonl.gz.json')).toBe('{"n":1}');
});

test('the mirror leaves the reports out: they are not deposits', async () => {
  const bucket = `reports-${++bucketNo}`;
  await s3.createBucket(bucket);
  await s3.put(bucket, 'reports/acme/a.json', '{}');
  await s3.put(bucket, 'acme/a.jsonl.gz', 'x');
  const s = settings(bucket);
  const listed = await listBucket(s3ClientFor(s), s, () => undefined);
  expect(listed.map((o) => o.key)).toEqual(['acme/a.jsonl.gz']);
  // without reports on, reports/ is a folder like any other (ingest quarantines what does not belong)
  const plain = await listBucket(s3ClientFor(s), { ...s, reports: undefined }, () => undefined);
  expect(plain.map((o) => o.key)).toEqual(['acme/a.jsonl.gz', 'reports/acme/a.json']);
});
