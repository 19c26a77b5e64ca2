import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { fault, type Logger } from '../../../src/base/index.ts';
import { ReportWriter, s3ClientFor } from '../../../src/bucket/index.ts';
import { listBucket } from '../../../src/bucket/s3/listing.ts';
import type { S3BucketSettings } from '../../../src/config/index.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../../support/s3rver.ts';

/**
 * Reports written back into the bucket (`[buckets.*] reports`), against s3rver (the real AWS SDK, a real server),
 * from a real store in a temp folder: what is due is the store's, read as it is sent.
 */

let s3: S3Server;
let dir: ReturnType<typeof tempDir>;
let bucketNo = 0;
let storeNo = 0;
const writers: ReportWriter[] = [];
const stores: Store[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
  dir = tempDir();
});
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
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

function openStore(folder: string): Store {
  const store = Store.open(join(dir.path, folder), 'production', { mapSizeBytes: 1 << 26 });
  stores.push(store);
  return store;
}

function writer(store: Store, s: S3BucketSettings, log: Logger, retry = { firstMs: 20, maxMs: 100 }): ReportWriter {
  const w = new ReportWriter(s3ClientFor(s), s, store, log, retry);
  writers.push(w);
  return w;
}

/** A file applied to the store, as ingestion decides it; its key. */
function applied(store: Store, platform = 'acme'): string {
  const f = { ...preparedFile([{ doi: '10.5555/r1' }], { platform }), inOrderGiven: true };
  const [status] = store.applyFilesSync([f]);
  if (status?.status !== 'applied') throw new Error(`not applied: ${status?.status}`);
  return f.key;
}

test('each report lands as reports/<platform>/<name>.json under the prefix, the name whole, as the store has it now', async () => {
  const bucket = `reports-${++bucketNo}`;
  await s3.createBucket(bucket);
  const s = settings(bucket, 'deposits/');
  const store = openStore(`store-${++storeNo}`);
  const w = writer(store, s, recorder().log);
  const key = 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz';
  expect(w.objectKey(key)).toBe('deposits/reports/acme/00000000-0000-4000-8000-000000000001.jsonl.gz.json');
  // two files of a platform have two reports, whatever their names (a quarantined one may lack .jsonl.gz)
  expect(w.objectKey('acme/x')).not.toBe(w.objectKey('acme/x.jsonl.gz'));
  // quarantined, then the same name deposited again and applied: one report, the later one
  const q = preparedFile([{ doi: '10.5555/q1' }], { platform: 'acme' });
  await store.quarantineFile({ ...q, hash: 'bad' }, fault('NOT_GZIP', `${q.key}: not gzip`), { tries: 1 });
  store.applyFilesSync([{ ...q, inOrderGiven: true }]);
  const b = applied(store, 'beta');
  expect(store.reportsDueCount()).toBe(2);
  w.nudge();
  await w.idle();
  expect(JSON.parse(await read(bucket, w.objectKey(q.key)))).toMatchObject({ key: q.key, outcome: 'applied' });
  expect(await read(bucket, w.objectKey(b))).toBe(store.reportText(b)!);
  expect(store.reportsDueCount()).toBe(0);
});

test('a failed write is logged and retried until it succeeds: the bucket missing, then made', async () => {
  const bucket = `reports-${++bucketNo}`;
  const s = settings(bucket);
  const r = recorder();
  const store = openStore(`store-${++storeNo}`);
  const w = writer(store, s, r.log);
  const failed = r.next('s3.report_write_failed');
  const key = applied(store);
  w.nudge(); // returns at once: ingestion never waits for the bucket
  await failed;
  expect(r.events[0]!.fields).toMatchObject({ key: `reports/${key}.json`, code: 'S3_NO_SUCH_BUCKET' });
  await s3.createBucket(bucket);
  await w.idle();
  expect(await read(bucket, `reports/${key}.json`)).toBe(store.reportText(key)!);
});

test('reports due while the bucket is down outlive a stop: after a restart with the bucket back, every one is written', async () => {
  const bucket = `reports-${++bucketNo}`;
  const s = settings(bucket);
  const folder = `store-${++storeNo}`;
  const r = recorder();
  let store = openStore(folder);
  const w = writer(store, s, r.log);
  const failed = r.next('s3.report_write_failed');
  const keys = Array.from({ length: 5 }, (_, i) => applied(store, i % 2 ? 'acme' : 'beta'));
  w.nudge();
  await failed;
  // a file quarantined while the writer is stopped (another process, or the daemon stopping) is due as well
  const q = preparedFile([], { platform: 'acme' });
  keys.push(q.key);
  const stopped = r.next('s3.reports_not_written');
  writers.splice(writers.indexOf(w), 1);
  await w.close();
  await stopped;
  expect(r.events.at(-1)!.fields).toMatchObject({ count: 5 });
  await store.quarantineFile(q, fault('NOT_GZIP', `${q.key}: not gzip`), { tries: 1 });
  stores.splice(stores.indexOf(store), 1);
  await store.close();

  await s3.createBucket(bucket);
  store = openStore(folder);
  expect(store.reportsDueCount()).toBe(6);
  const again = writer(store, s, recorder().log);
  again.nudge(); // what the daemon does at start
  await again.idle();
  for (const key of keys) expect(await read(bucket, `reports/${key}.json`)).toBe(store.reportText(key)!);
  expect(store.reportsDueCount()).toBe(0);
});

test('a report that changes while it is sent stays due and is sent again as it is now', async () => {
  const bucket = `reports-${++bucketNo}`;
  await s3.createBucket(bucket);
  const s = settings(bucket);
  const store = openStore(`store-${++storeNo}`);
  const key = applied(store);
  const sent = store.reportText(key)!;
  // a conflict recorded after the send began: the report in the bucket lacks it
  const f = { ...preparedFile([{ doi: '10.5555/c1' }]), key, hash: 'other-content', inOrderGiven: true };
  const [status] = store.applyFilesSync([f]);
  expect(status?.status).toBe('conflict');
  await store.reportWritten(key, sent);
  expect(store.nextReportDue()).toBe(key);
  const w = writer(store, s, recorder().log);
  await w.idle();
  expect(JSON.parse(await read(bucket, `reports/${key}.json`)).conflicts).toHaveLength(1);
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
