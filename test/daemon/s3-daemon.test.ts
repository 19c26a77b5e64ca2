import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Store } from '../../src/store/index.ts';
import {
  dump,
  gzLines,
  runCli,
  startDaemon,
  tempDir,
  uuid,
  waitFor,
  waitForLog,
  writeDeposit,
} from '../support/fixtures.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../support/s3rver.ts';

let s3: S3Server;
let dir: ReturnType<typeof tempDir>;
let n = 0;
let prodBucket: string;
let stagingBucket: string;
let daemons: { stop(): Promise<number>; log(): string }[] = [];
const ENV = {
  TEST_S3_KEY: S3_CREDENTIALS.accessKeyId,
  TEST_S3_SECRET: S3_CREDENTIALS.secretAccessKey,
  TEST_ACME_REPORTS: 'acme-reports-key-1',
  TEST_BETA_REPORTS: 'beta-reports-key-1',
};

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3.dispose();
});
beforeEach(async () => {
  dir = tempDir();
  n++;
  prodBucket = `prod-${n}`;
  stagingBucket = `staging-${n}`;
  await s3.createBucket(prodBucket);
  await s3.createBucket(stagingBucket);
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  dir.remove();
});

/** A replica: its own config, mirror folders and store, pointed at the shared buckets. */
function replica(name: string, opts: { reports?: boolean } = {}): string {
  const path = join(dir.path, `${name}.toml`);
  const bucket = (b: string, mirror: string) => `kind = "s3"
path = "${name}/${mirror}"
endpoint = "${s3.endpoint}"
region = "us-east-1"
bucket = "${b}"
forcePathStyle = true
accessKeyIdEnv = "TEST_S3_KEY"
secretAccessKeyEnv = "TEST_S3_SECRET"
pollSeconds = 0.2${opts.reports ? '\nreports = true' : ''}`;
  writeFileSync(
    path,
    `[server]
listen = "127.0.0.1:0"
[store]
dir = "${name}/db"
mapSizeGiB = 1
[ingest]
retryBaseMs = 20
[buckets.production]
${bucket(prodBucket, 'mirror')}
[buckets.staging]
${bucket(stagingBucket, 'staging-mirror')}
[[platforms]]
name = "acme"
${opts.reports ? 'reportKeyEnv = "TEST_ACME_REPORTS"' : ''}
[[platforms]]
name = "beta"
${opts.reports ? 'reportKeyEnv = "TEST_BETA_REPORTS"' : ''}
`,
  );
  return path;
}

function daemon(config: string) {
  const d = startDaemon(config, ENV);
  daemons.push(d);
  return d;
}

async function upload(bucket: string, platform: string, lines: object[]): Promise<string> {
  const key = `${platform}/${uuid()}.jsonl.gz`;
  await s3.put(bucket, key, gzLines(lines));
  return key;
}

async function dumpUntil(config: string, count: number, extra: string[] = []) {
  return waitFor(
    async () => {
      const l = await dump(config, extra);
      return l.length === count ? l : undefined;
    },
    `${count} holdings in --dump ${extra.join(' ')}`,
    30_000,
  );
}

test('files uploaded while the daemon runs are mirrored and applied', async () => {
  const cfg = replica('a');
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  await upload(prodBucket, 'acme', [{ doi: '10.7777/s3.live', accessType: 'open' }]);
  const lines = await dumpUntil(cfg, 1);
  expect(lines[0]).toMatchObject({ platform: 'acme', doi: '10.7777/s3.live', accessType: 'open' });
  // the listing's time is in /metrics and /healthz
  const url = /"url":"([^"]+)"/.exec(d.log())![1]!;
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const listed = Number(
    /^doi_holdings_s3_last_listing_timestamp_seconds\{env="production"\} (\S+)$/m.exec(metrics)?.[1],
  );
  expect(listed).toBeGreaterThan(Date.now() / 1000 - 60);
  expect(metrics).toMatch(/^doi_holdings_s3_last_sync_timestamp_seconds\{env="production"\} \d/m);
  expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({
    status: 'ok',
    production: { s3: { failing: null } },
  });
});

test('files uploaded while the daemon is down are applied when it starts', async () => {
  const cfg = replica('a');
  await upload(prodBucket, 'acme', [{ doi: '10.7777/down.1' }]);
  await upload(prodBucket, 'beta', [{ doi: '10.7777/down.2', accessType: 'free' }]);
  daemon(cfg);
  expect((await dumpUntil(cfg, 2)).map((l) => l.doi)).toEqual(['10.7777/down.1', '10.7777/down.2']);
});

test('the S3 server stopped mid-way and restarted: the daemon keeps running and catches up', async () => {
  const cfg = replica('a');
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  await upload(prodBucket, 'acme', [{ doi: '10.7777/before' }]);
  await dumpUntil(cfg, 1);
  await s3.stop();
  await waitForLog(d, 's3.sync_failed');
  // S3 down: reported by /healthz, which stays 200 (the replica answers from what it holds)
  const url = /"url":"([^"]+)"/.exec(d.log())![1]!;
  await waitForLog(d, '"event":"s3.sync_failed","env":"production"');
  const health = await fetch(`${url}/healthz`);
  expect(health.status).toBe(200);
  expect(((await health.json()) as { production: { s3: { failing: string | null } } }).production.s3.failing).toMatch(
    /^S3_/,
  );
  await s3.restart();
  await upload(prodBucket, 'acme', [{ doi: '10.7777/after' }]);
  expect((await dumpUntil(cfg, 2)).map((l) => l.doi)).toEqual(['10.7777/after', '10.7777/before']);
  expect(d.log()).toContain('s3.recovered');
});

test('a re-upload of the same key with other content is quarantined, not applied', async () => {
  const cfg = replica('a');
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  const key = await upload(prodBucket, 'acme', [{ doi: '10.7777/orig', accessType: 'paid' }]);
  await dumpUntil(cfg, 1);
  await s3.put(prodBucket, key, gzLines([{ doi: '10.7777/sneaky', accessType: 'open' }]));
  const failures = await waitFor(
    async () => {
      const f = (await runCli(['--failures', '--config', cfg], ENV)).lines.map((l) => JSON.parse(l));
      return f.length > 0 ? f : undefined;
    },
    'a conflict in --failures',
    30_000,
  );
  expect(failures).toMatchObject([{ kind: 'conflict', key, code: 'KEY_REUSED' }]);
  expect((await dump(cfg)).map((l) => l.doi)).toEqual(['10.7777/orig']);
});

test('staging deposits stay out of production answers', async () => {
  const cfg = replica('a');
  daemon(cfg);
  await upload(stagingBucket, 'acme', [{ doi: '10.7777/trial' }]);
  await dumpUntil(cfg, 1, ['--env', 'staging']);
  expect(await dump(cfg)).toEqual([]);
});

test('an object outside any platform folder and a 0-byte object are quarantined with reasons', async () => {
  const cfg = replica('a');
  daemon(cfg);
  await s3.put(prodBucket, `${uuid()}.jsonl.gz`, gzLines([{ doi: '10.7777/root' }]));
  await s3.put(prodBucket, `acme/${uuid()}.jsonl.gz`, '');
  const failures = await waitFor(
    async () => {
      const f = (await runCli(['--failures', '--config', cfg], ENV)).lines.map((l) => JSON.parse(l));
      return f.length === 2 ? f : undefined;
    },
    'two quarantined files',
    30_000,
  );
  expect(failures.map((f) => f.code).sort()).toEqual(['EMPTY_FILE', 'NOT_IN_PLATFORM_FOLDER']);
  expect(await dump(cfg)).toEqual([]);
});

test('two replicas converge: one saw the files arrive one by one, the other started after all were uploaded', async () => {
  const a = replica('a');
  const first = daemon(a);
  await waitForLog(first, 'daemon.started');
  const steps: [string, object[]][] = [
    [
      'acme',
      [
        { doi: '10.7777/r1', accessType: 'paid' },
        { doi: '10.7777/r2', accessType: 'open' },
      ],
    ],
    ['beta', [{ doi: '10.7777/r1', accessType: 'free' }]],
    [
      'acme',
      [
        { doi: '10.7777/r1', accessType: 'open' },
        { doi: '10.7777/r2', deleted: true },
      ],
    ],
    ['acme', [{ doi: '10.7777/r2', accessType: 'permFree' }, { doi: '10.7777/R3' }]],
    [
      'beta',
      [
        { doi: '10.7777/r1', deleted: true },
        { doi: '10.7777/r3', accessType: 'paid' },
      ],
    ],
  ];
  let expected = 0;
  for (const [platform, lines] of steps) {
    await upload(prodBucket, platform, lines);
    // several uploads within one second too: order must still be (LastModified, key)
    await upload(prodBucket, platform, [{ doi: `10.7777/extra.${++expected}` }]);
  }
  const finalCount = 4 + expected; // r1@acme, r2@acme, R3@acme, r3@beta + extras
  const dumpA = await dumpUntil(a, finalCount);
  const b = replica('b');
  daemon(b);
  const dumpB = await dumpUntil(b, finalCount);
  expect(JSON.stringify(dumpB)).toBe(JSON.stringify(dumpA));
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  const history = (name: string) => {
    const store = Store.open(join(dir.path, name, 'db'), 'production', { mapSizeBytes: 1 << 30 });
    const out = ['10.7777/r1', '10.7777/r2', '10.7777/r3'].map((k) =>
      store.holdingsOf(k).map((h) => ({
        platform: h.platform,
        live: h.live,
        events: h.events.map((e) => ({ ...e, fileSeq: store.fileKeyOfSeq(e.fileSeq) })),
      })),
    );
    void store.close();
    return out;
  };
  const histA = history('a');
  expect(histA[1]![0]!.events.map((e) => e.kind)).toEqual(['added', 'removed', 're-added']);
  expect(history('b')).toEqual(histA);
});

test('deposit reports: written back into the bucket beside the file, not ingested, and served to the platform alone', async () => {
  const cfg = replica('r', { reports: true });
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  const key = await upload(prodBucket, 'acme', [{ doi: '10.7777/rep.1', accessType: 'open' }, { doi: 'junk' }]);
  const reportKey = `reports/${key}.json`;
  const written = await waitFor(
    async () => {
      try {
        const r = await s3.client.send(new GetObjectCommand({ Bucket: prodBucket, Key: reportKey }));
        return JSON.parse(await r.Body!.transformToString());
      } catch {
        return undefined;
      }
    },
    `${reportKey} in the bucket`,
    30_000,
  );
  expect(written).toMatchObject({ env: 'production', key, outcome: 'applied', counts: { records: 2, rejected: 1 } });
  expect(written.rejectedLines).toEqual([expect.objectContaining({ line: 2, path: '/doi', code: 'INVALID_DOI' })]);
  // the same report through the API, with acme's key; beta's key does not find acme
  const url = /"url":"([^"]+)"/.exec(d.log())![1]!;
  const name = key.slice('acme/'.length);
  const api = await fetch(`${url}/v2.2/platforms/acme/deposits/${name}`, {
    headers: { 'x-api-key': ENV.TEST_ACME_REPORTS },
  });
  expect(await api.json()).toEqual(written);
  const list = await fetch(`${url}/v2.2/platforms/acme/deposits`, { headers: { 'x-api-key': ENV.TEST_BETA_REPORTS } });
  expect(list.status).toBe(404);
  // a later upload is applied after the report was listed by the mirror: the report was left out, not quarantined
  await upload(prodBucket, 'beta', [{ doi: '10.7777/rep.2' }]);
  await dumpUntil(cfg, 2);
  const failures = await runCli(['--failures', '--config', cfg], ENV);
  expect(failures.lines).toEqual([]);
});

test('a report owed when the daemon was not running (a file decided by --ingest) is written once it starts', async () => {
  const cfg = replica('owed', { reports: true });
  // a file from outside the bucket folder: the daemon's own scan never sees it, only the store knows it is owed
  const outside = join(dir.path, 'outside');
  const key = writeDeposit(outside, 'acme', [{ doi: '10.7777/owed.1' }]);
  const r = await runCli(['--ingest', '--config', cfg, join(outside, key)], ENV);
  expect(JSON.parse(r.lines[0]!).outcome).toBe('applied');
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  const written = await waitFor(
    async () => {
      try {
        const o = await s3.client.send(new GetObjectCommand({ Bucket: prodBucket, Key: `reports/${key}.json` }));
        return JSON.parse(await o.Body!.transformToString());
      } catch {
        return undefined;
      }
    },
    `reports/${key}.json in the bucket`,
    30_000,
  );
  expect(written).toMatchObject({ env: 'production', key, outcome: 'applied' });
});

test('without reports on its bucket, a daemon keeps no reports owed: the marks --ingest left are dropped at start', async () => {
  const cfg = replica('unowed');
  const outside = join(dir.path, 'outside-unowed');
  const key = writeDeposit(outside, 'acme', [{ doi: '10.7777/unowed.1' }]);
  expect((await runCli(['--ingest', '--config', cfg, join(outside, key)], ENV)).code).toBe(0);
  const owed = () => {
    const store = Store.open(join(dir.path, 'unowed', 'db'), 'production', { mapSizeBytes: 1 << 30, readOnly: true });
    try {
      return store.reportsDueCount();
    } finally {
      void store.close();
    }
  };
  expect(owed()).toBe(1);
  const d = daemon(cfg);
  await waitForLog(d, 'daemon.started');
  await d.stop();
  expect(owed()).toBe(0);
});
