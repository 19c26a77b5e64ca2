/**
 * S3 benchmark (issue 11), against a real S3-protocol server (s3rver) on loopback, through the real daemon parts
 * (S3Mirror -> mirror folder -> Ingestor -> LMDB):
 *  1. PutObject -> the DOI visible in the store: p50/p95 over 50 uploads, printed beside the poll interval.
 *     Each upload is one new deposit file with one record; the store is polled every 5 ms.
 *  2. A cold replica catching up on 100 files x 10,000 records from the S3 server, against the local-folder
 *     ingest rate of the same files measured in the same run.
 */
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '../src/base/log.ts';
import { SAME_SECOND_GUARD_MS } from '../src/bucket/index.ts';
import { type Config, loadConfig } from '../src/config/index.ts';
import { EnvironmentRunner } from '../src/daemon/environment-runner.ts';
import { doiKey } from '../src/doi/index.ts';
import { Ingestor } from '../src/ingest/index.ts';
import { Store } from '../src/store/index.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { S3_CREDENTIALS, startS3rver } from '../test/support/s3rver.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import { ingestData } from './lib/ingest-data.ts';
import { fmt, percentile } from './lib/measure.ts';

const POLL_SECONDS = 1;
const UPLOADS = 50;

const { dir: data, manifest } = await ingestData();
const s3 = await startS3rver();
const work = tempDir('doi-holdings-bench-s3-');
const secrets = { BENCH_S3_KEY: S3_CREDENTIALS.accessKeyId, BENCH_S3_SECRET: S3_CREDENTIALS.secretAccessKey };

function config(name: string, bucket: string): Config {
  const path = join(work.path, `${name}.toml`);
  writeFileSync(
    path,
    `[store]
dir = "${name}/db"
mapSizeGiB = 16
[buckets.production]
kind = "s3"
path = "${name}/mirror"
endpoint = "${s3.endpoint}"
region = "us-east-1"
bucket = "${bucket}"
forcePathStyle = true
accessKeyIdEnv = "BENCH_S3_KEY"
secretAccessKeyEnv = "BENCH_S3_SECRET"
pollSeconds = ${POLL_SECONDS}
${PLATFORM_NAMES.map((p) => `[[platforms]]\nname = "${p}"`).join('\n')}
`,
  );
  return loadConfig(path, secrets, { requireSecrets: true });
}

try {
  // 1. upload -> visible
  await s3.createBucket('latency');
  const live = new EnvironmentRunner(
    'production',
    config('latency', 'latency').buckets.production,
    config('latency', 'latency'),
    new Set(PLATFORM_NAMES),
    silentLogger,
  );
  await live.start();
  const latencies: number[] = [];
  for (let i = 0; i < UPLOADS; i++) {
    const doi = `10.5555/bench.latency.${i}`;
    const body = Bun.gzipSync(Buffer.from(`${JSON.stringify({ doi, accessType: 'open' })}\n`));
    const key = `wiley/${crypto.randomUUID()}.jsonl.gz`;
    const t0 = performance.now();
    await s3.put('latency', key, body);
    while (live.store.holdingsOf(doiKey(doi)).length === 0) await Bun.sleep(5);
    latencies.push(performance.now() - t0);
    await Bun.sleep(Math.random() * 700); // uploads land at arbitrary points of the poll cycle
  }
  await live.close();

  // 2. cold replica: local rate first, then the same files from S3
  const files = manifest.a;
  const local = Store.open(join(work.path, 'local-db'), 'production', { mapSizeBytes: 16 * 1024 ** 3 });
  const platforms = new Set(PLATFORM_NAMES);
  const ingestor = new Ingestor({
    env: 'production',
    store: local,
    root: join(data, 'bucket'),
    platforms,
    settings: config('x', 'latency').ingest,
    log: silentLogger,
  });
  let t = performance.now();
  await ingestor.submit(files);
  await ingestor.idle();
  const localSeconds = (performance.now() - t) / 1000;
  await ingestor.close();
  await local.close();

  await s3.createBucket('replica');
  for (let i = 0; i < files.length; i += 10)
    await Promise.all(
      files.slice(i, i + 10).map(async (key) => s3.put('replica', key, await readFile(join(data, 'bucket', key)))),
    );
  // the files are already in the bucket when the replica starts: past the mirror's same-second guard (an object
  // is taken once its LastModified second has ended, and a little more), so the first listing takes them all
  await Bun.sleep(SAME_SECOND_GUARD_MS + 100);
  const cfg = config('replica', 'replica');
  const replica = new EnvironmentRunner(
    'production',
    cfg.buckets.production,
    cfg,
    new Set(cfg.platforms.map((p) => p.name)),
    silentLogger,
  );
  t = performance.now();
  await replica.start();
  while (replica.ingestor.stats.filesApplied < files.length) await Bun.sleep(20);
  const s3Seconds = (performance.now() - t) / 1000;
  await replica.close();

  const records = files.length * manifest.recordsPerFile;
  const localRate = records / localSeconds;
  const s3Rate = records / s3Seconds;
  console.log(`\nS3 (s3rver ${s3.endpoint}, AWS SDK, the daemon's S3Mirror -> Ingestor -> LMDB)`);
  console.log(`PutObject -> visible in the store, ${UPLOADS} uploads, poll interval ${POLL_SECONDS * 1000} ms:`);
  console.log(
    `  p50 ${fmt(percentile(latencies, 50))} ms, p95 ${fmt(percentile(latencies, 95))} ms, max ${fmt(Math.max(...latencies))} ms (target p50 <= poll + 1 s = ${fmt(POLL_SECONDS * 1000 + 1000)} ms)`,
  );
  console.log(
    `  (an object is taken ${SAME_SECOND_GUARD_MS - 1000} ms after its LastModified second has ended, so every object of a second is`,
  );
  console.log(
    `   applied in (LastModified, key) order on every replica: about ${fmt((SAME_SECOND_GUARD_MS - 500) / 1000, 2)} s of the figure on average)`,
  );
  console.log(`Cold replica catch-up, ${files.length} files x ${fmt(manifest.recordsPerFile)} records:`);
  console.log(`  from S3: ${fmt(s3Rate)} records/s (${fmt(s3Seconds, 1)} s, listing + download + ingest)`);
  console.log(`  local folder, same files, same run: ${fmt(localRate)} records/s (${fmt(localSeconds, 1)} s)`);
  console.log(`  ratio ${fmt(s3Rate / localRate, 2)} (target >= 0.8)`);
} finally {
  await s3.dispose();
  work.remove();
}
