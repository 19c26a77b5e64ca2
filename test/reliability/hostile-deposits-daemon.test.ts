import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import type { Logger } from '../../src/base/log.ts';
import { S3Mirror } from '../../src/bucket/index.ts';
import {
  BUN,
  gzLines,
  REPO,
  runCli,
  startDaemon,
  type TestConfig,
  tempDir,
  uuid,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../support/s3rver.ts';

/**
 * Hostile deposits through the daemon (issue 20, item 3): a gzip bomb and what memory it costs, links and FIFOs in
 * a local bucket, hostile S3 keys through the mirror. The CLI cases of the list: hostile-deposits.test.ts.
 */

const GOOD = [
  { doi: '10.5555/keep.1', accessType: 'open' },
  { doi: '10.5555/keep.2', accessType: 'paid' },
];
const MB = 1_000_000;
/** a valid line that would change the good deposit: only ever inside files that must apply nothing */
const REMOVE_KEEP_1 = { doi: '10.5555/keep.1', deleted: true };

/** A gzip file of `bytes` zero bytes, compressed as a stream (1 GiB becomes about 1 MB). */
async function zeroBomb(bytes: number): Promise<Buffer> {
  const z = zlib.createGzip({ level: 9 });
  const parts: Buffer[] = [];
  z.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise((resolve) => z.on('end', resolve));
  const chunk = Buffer.alloc(1 << 20);
  for (let left = bytes; left > 0; left -= chunk.length)
    if (!z.write(chunk.subarray(0, Math.min(left, chunk.length)))) await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat(parts);
}

async function dumpHistory(config: string, env: Record<string, string> = {}): Promise<string[]> {
  const r = await runCli(['--dump', '--history', '--config', config], env);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.lines;
}

async function failuresOf(
  config: string,
  env: Record<string, string> = {},
): Promise<Map<string, Record<string, unknown>>> {
  const lines = (await runCli(['--failures', '--config', config], env)).lines.map(
    (l) => JSON.parse(l) as Record<string, unknown>,
  );
  return new Map(lines.map((f) => [f.key as string, f]));
}

const logEvents = (log: string, event: string) =>
  log
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * The CLI as a child process, with its peak resident memory (bytes) once it has exited. The peak is read in a
 * fresh wrapper process whose only child is the CLI: a child's rusage as Bun reports it is the maximum over every
 * child the parent has waited for, and this test runner has run many (860 MB daemons among them).
 */
async function cliWithPeak(args: string[]): Promise<{ code: number; lines: string[]; maxRSS: number }> {
  const wrapper = `const p = Bun.spawn(process.argv.slice(1), { stdout: 'inherit', stderr: 'ignore' }); const code = await p.exited; console.error('MAXRSS ' + p.resourceUsage().maxRSS); process.exit(code);`;
  const proc = Bun.spawn([BUN, '-e', wrapper, BUN, join(REPO, 'src/main.ts'), ...args], {
    cwd: REPO,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const maxRSS = Number(/MAXRSS (\d+)/.exec(stderr)?.[1]);
  return { code, lines: stdout.split('\n').filter((l) => l !== ''), maxRSS };
}

let bomb: Buffer;
beforeAll(async () => {
  bomb = await zeroBomb(1 << 30);
  expect(bomb.length).toBeLessThan(1.1 * MB);
});

describe('the gzip bomb and memory, through the CLI', () => {
  let dir: ReturnType<typeof tempDir>;
  let cfg: TestConfig;
  beforeAll(() => {
    dir = tempDir('doi-holdings-bomb-');
    cfg = writeConfig(dir.path, '');
    writeFileSync(
      cfg.path,
      readFileSync(cfg.path, 'utf8').replace('[ingest]\n', `[ingest]\nmaxDecompressedBytes = ${32 << 20}\n`),
    );
  });
  afterAll(() => dir.remove());

  test('a 1 GiB gzip bomb is TOO_LARGE at the configured bound; peak RSS stays under 300 MB', async () => {
    const key = writeDeposit(cfg.bucket, 'acme', [], { bytes: bomb });
    const r = await cliWithPeak(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    expect(JSON.parse(r.lines[0]!)).toEqual({
      env: 'production',
      key,
      outcome: 'quarantined',
      code: 'TOO_LARGE',
      message: `${key}: the decompressed content is over the ${32 << 20}-byte bound`,
    });
    expect(r.maxRSS).toBeLessThan(300 * MB);
  });

  test('32 MiB of newlines under the bound (1,000 times their gzip) apply as no records; peak RSS stays under 300 MB', async () => {
    // split('\n') made this an array of 33 million strings: over 600 MB
    const bytes = Bun.gzipSync(Buffer.alloc((32 << 20) - 64, '\n'), { level: 9 });
    expect(bytes.length).toBeLessThan(40_000);
    const key = writeDeposit(cfg.bucket, 'acme', [], { bytes });
    const r = await cliWithPeak(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({
      key,
      outcome: 'applied',
      counts: { records: 0, added: 0, rejected: 0 },
    });
    expect(r.maxRSS).toBeLessThan(300 * MB);
  });
});

describe('a local bucket, through the daemon', () => {
  let dir: ReturnType<typeof tempDir>;
  let cfg: TestConfig;
  let daemon: ReturnType<typeof startDaemon>;
  let goodBefore: string[];
  let failures: Map<string, Record<string, unknown>>;
  let peakRss = 0;
  let health: { status: number; body: Record<string, unknown> };
  const K: Record<string, string> = {};
  const outside = () => join(dir.path, 'outside');

  beforeAll(async () => {
    dir = tempDir('doi-holdings-hostile-daemon-');
    cfg = writeConfig(dir.path);
    const good = writeDeposit(cfg.bucket, 'acme', GOOD, { mtime: 1_700_000_000 });
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, good)])).code).toBe(0);
    goodBefore = await dumpHistory(cfg.path);
    mkdirSync(join(outside(), 'platform'), { recursive: true });
    writeFileSync(join(outside(), 'secret.jsonl.gz'), gzLines([REMOVE_KEEP_1, { doi: '10.5555/new.outside' }]));
    writeFileSync(join(outside(), 'platform', `${uuid()}.jsonl.gz`), gzLines([{ doi: '10.5555/new.outside.folder' }]));

    // found by the start-up scan
    K.bomb = writeDeposit(cfg.bucket, 'acme', [], { bytes: bomb, mtime: 1_700_000_100 });
    K.scannedLink = `acme/${uuid()}.jsonl.gz`;
    symlinkSync(join(outside(), 'secret.jsonl.gz'), join(cfg.bucket, K.scannedLink));
    K.linkedFolder = 'beta';
    symlinkSync(join(outside(), 'platform'), join(cfg.bucket, 'beta'));
    K.nested = writeDeposit(cfg.bucket, 'acme/%2e%2e', [REMOVE_KEEP_1], { mtime: 1_700_000_100 });

    daemon = startDaemon(cfg.path);
    await waitForLog(daemon, 'daemon.started');
    // arriving while it runs (the watcher)
    K.liveLink = `acme/${uuid()}.jsonl.gz`;
    symlinkSync(join(outside(), 'secret.jsonl.gz'), join(cfg.bucket, K.liveLink));
    K.fifo = `acme/${uuid()}.jsonl.gz`;
    expect(Bun.spawnSync(['mkfifo', join(cfg.bucket, K.fifo)]).exitCode).toBe(0);
    const full = gzLines([REMOVE_KEEP_1]);
    K.truncated = writeDeposit(cfg.bucket, 'acme', [], { bytes: full.subarray(0, full.length >> 1) });
    await Bun.sleep(300);
    // a good file after all of them: applied once nothing before it holds the queue
    K.after = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/new.after', accessType: 'free' }]);
    utimesSync(join(cfg.bucket, K.after), new Date(), new Date(Date.now() + 5_000));

    failures = await waitFor(
      async () => {
        const f = await failuresOf(cfg.path);
        return f.size >= 7 ? f : undefined;
      },
      'seven quarantined files',
      30_000,
    );
    await waitForLog(daemon, `"event":"file.applied","env":"production","key":"${K.after}"`, 30_000);
    peakRss = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${daemon.pid}/status`, 'utf8'))![1]) * 1024;
    const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
    const res = await fetch(`${url}/healthz`);
    health = { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    dir.remove();
  });

  const expectQuarantined = (key: string, code: string, message: string) => {
    expect(failures.get(key)).toMatchObject({ kind: 'quarantined', key, code, message });
    expect(logEvents(daemon.log(), 'file.quarantined').filter((e) => e.key === key)).toEqual([
      expect.objectContaining({ level: 'error', code, message }),
    ]);
  };

  test("a 1 GiB gzip bomb is quarantined TOO_LARGE; the daemon's peak RSS stays under 300 MB", () => {
    expectQuarantined(K.bomb!, 'TOO_LARGE', `${K.bomb}: the decompressed content is over the 67108864-byte bound`);
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss).toBeLessThan(300 * MB);
  });

  test('links to a file or folder outside the bucket, at start-up or later, are NOT_REGULAR_FILE and never followed', async () => {
    const secret = join(outside(), 'secret.jsonl.gz');
    const why = 'not a regular file; links in a bucket folder are not followed and only regular files are read';
    expectQuarantined(K.scannedLink!, 'NOT_REGULAR_FILE', `${K.scannedLink}: a symbolic link (to ${secret}), ${why}`);
    expectQuarantined(K.liveLink!, 'NOT_REGULAR_FILE', `${K.liveLink}: a symbolic link (to ${secret}), ${why}`);
    expectQuarantined(
      K.linkedFolder!,
      'NOT_REGULAR_FILE',
      `beta: a symbolic link (to ${join(outside(), 'platform')}), ${why}`,
    );
    const dois = (await dumpHistory(cfg.path)).map((l) => (JSON.parse(l) as { doi: string }).doi);
    expect(dois).not.toContain('10.5555/new.outside');
    expect(dois).not.toContain('10.5555/new.outside.folder');
  });

  test('a FIFO is NOT_REGULAR_FILE, not read, and does not stall the files after it', () => {
    expectQuarantined(
      K.fifo!,
      'NOT_REGULAR_FILE',
      `${K.fifo}: a FIFO, not a regular file; links in a bucket folder are not followed and only regular files are read`,
    );
    expect(logEvents(daemon.log(), 'file.applied').map((e) => e.key)).toEqual([K.after]);
  });

  test('a truncated gzip is retried, then quarantined GZIP_TRUNCATED', () => {
    expectQuarantined(
      K.truncated!,
      'GZIP_TRUNCATED',
      `${K.truncated}: the gzip stream is truncated (unexpected end of file) (gave up after 3 tries)`,
    );
    expect(failures.get(K.truncated!)!.tries).toBe(3);
    expect(
      logEvents(daemon.log(), 'file.retry')
        .filter((e) => e.key === K.truncated)
        .map((e) => e.tries),
    ).toEqual([1, 2]);
  });

  test('a file in a "%2e%2e" folder is NESTED_PATH', () => {
    expectQuarantined(
      K.nested!,
      'NESTED_PATH',
      `${K.nested}: files must sit directly in a platform folder (<platform>/<name>.jsonl.gz), not deeper`,
    );
  });

  test('the daemon still answers /healthz, and the good deposit is byte-identical', async () => {
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
    expect([...failures.keys()].sort()).toEqual(
      [K.bomb, K.scannedLink, K.liveLink, K.linkedFolder, K.fifo, K.truncated, K.nested].map((k) => k!).sort(),
    );
    const after = await dumpHistory(cfg.path);
    expect(after.filter((l) => !l.includes('"10.5555/new.after"'))).toEqual(goodBefore);
    expect(after).toHaveLength(goodBefore.length + 1);
  });
});

describe('hostile S3 keys, through the mirror', () => {
  let s3: S3Server;
  let dir: ReturnType<typeof tempDir>;
  const ENV = { TEST_S3_KEY: S3_CREDENTIALS.accessKeyId, TEST_S3_SECRET: S3_CREDENTIALS.secretAccessKey };
  beforeAll(async () => {
    s3 = await startS3rver();
    dir = tempDir('doi-holdings-hostile-s3-');
  });
  afterAll(async () => {
    await s3.dispose();
    dir.remove();
  });

  function s3Config(bucket: string): string {
    const path = join(dir.path, `${bucket}.toml`);
    writeFileSync(
      path,
      `[server]\nlisten = "127.0.0.1:0"\n[store]\ndir = "${bucket}/db"\nmapSizeGiB = 1\n[ingest]\nretryBaseMs = 20\n[buckets.production]\nkind = "s3"\npath = "${bucket}/mirror"\nendpoint = "${s3.endpoint}"\nregion = "us-east-1"\nbucket = "${bucket}"\nforcePathStyle = true\naccessKeyIdEnv = "TEST_S3_KEY"\nsecretAccessKeyEnv = "TEST_S3_SECRET"\npollSeconds = 0.2\n[[platforms]]\nname = "acme"\n`,
    );
    return path;
  }

  test('the daemon: backslash and control-character keys are skipped (s3.key_skipped, BAD_PATH), "%2e%2e" is NESTED_PATH, hidden keys are left alone', async () => {
    await s3.createBucket('hostile-keys');
    const cfg = s3Config('hostile-keys');
    const good = `acme/${uuid()}.jsonl.gz`;
    const hostile = {
      backslash: `acme\\..\\${uuid()}.jsonl.gz`,
      control: `acme/\u0001${uuid()}.jsonl.gz`,
      del: `acme/${uuid()}\u007f.jsonl.gz`,
    };
    const nested = `acme/%2e%2e/${uuid()}.jsonl.gz`;
    const superseded = `.superseded/${good}.0123456789abcdef`;
    for (const key of [...Object.values(hostile), nested, superseded, '.s3-mirror-state.json'])
      await s3.put('hostile-keys', key, gzLines([REMOVE_KEEP_1]));
    await s3.put('hostile-keys', good, gzLines([{ doi: '10.5555/keep.1', accessType: 'open' }]));
    const daemon = startDaemon(cfg, ENV);
    try {
      const failures = await waitFor(
        async () => {
          const f = await failuresOf(cfg, ENV);
          return f.size > 0 ? f : undefined;
        },
        'a quarantined file',
        30_000,
      );
      await waitForLog(daemon, `"event":"file.applied","env":"production","key":"${good}"`, 30_000);
      expect([...failures.values()]).toEqual([
        expect.objectContaining({ kind: 'quarantined', key: nested, code: 'NESTED_PATH' }),
      ]);
      const skipped = logEvents(daemon.log(), 's3.key_skipped');
      expect(skipped.map((e) => [e.level, e.key, e.code]).sort()).toEqual(
        Object.values(hostile)
          .map((k) => ['warn', k, 'BAD_PATH'])
          .sort(),
      );
      expect(skipped.find((e) => e.key === hostile.backslash)!.why).toBe(
        'the key contains a backslash (a folder separator on some systems); not mirrored',
      );
      expect(skipped.find((e) => e.key === hostile.control)!.why).toBe(
        'the key contains a control character; not mirrored',
      );
      const mirror = join(dir.path, 'hostile-keys', 'mirror');
      expect(readdirSync(join(mirror, 'acme')).sort()).toEqual(['%2e%2e', good.slice('acme/'.length)].sort());
      expect(existsSync(join(mirror, '.superseded'))).toBe(false);
      expect(
        Object.keys(JSON.parse(readFileSync(join(mirror, '.s3-mirror-state.json'), 'utf8')) as object).sort(),
      ).toEqual([good, nested].sort());
      expect((await dumpHistory(cfg, ENV)).map((l) => JSON.parse(l).doi)).toEqual(['10.5555/keep.1']);
      const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await daemon.stop();
    }
  }, 60_000);

  test('keys that lead outside the mirror or no file system takes (.., a 1,000-byte name) are skipped, and never hold back the others', async () => {
    // s3rver cannot store these keys (it writes ".." through, and dies on a 1,000-byte name): the listing gets them
    // added, each listed before the good object, and a GetObject of one of them gets the good object's bytes
    await s3.createBucket('injected-keys');
    const good = `acme/${uuid()}.jsonl.gz`;
    await s3.put('injected-keys', good, gzLines([{ doi: '10.5555/keep.1' }]));
    const injected = [
      'acme/../../etc/x.jsonl.gz',
      '../outside.jsonl.gz',
      `acme/${'n'.repeat(991)}.jsonl.gz`,
      '/acme/x.jsonl.gz',
      'acme//x.jsonl.gz',
      'acme/./x.jsonl.gz',
    ];
    expect(Buffer.byteLength(injected[2]!.slice('acme/'.length))).toBe(1_000);
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: S3_CREDENTIALS,
    });
    const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
    client.send = (async (command: unknown) => {
      if (command instanceof GetObjectCommand && injected.includes(command.input.Key!)) command.input.Key = good;
      const out = await send(command);
      if (command instanceof ListObjectsV2Command) {
        const listed = out as ListObjectsV2CommandOutput;
        const first = listed.Contents!.find((o) => o.Key === good)!;
        listed.Contents = [
          ...injected.map((Key) => ({ ...first, Key, LastModified: new Date(first.LastModified!.getTime() - 60_000) })),
          ...listed.Contents!,
        ];
      }
      return out;
    }) as typeof client.send;
    const logged: Record<string, unknown>[] = [];
    const log: Logger = { log: (level, event, fields) => void logged.push({ level, event, ...fields }) };
    const root = join(dir.path, 'injected', 'mirror');
    const settings = {
      kind: 's3' as const,
      path: root,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: 'injected-keys',
      prefix: '',
      forcePathStyle: true,
      credentials: S3_CREDENTIALS,
      credentialSource: 'test',
      pollMs: 200,
    };
    const handed: string[] = [];
    const mirror = new S3Mirror({
      settings,
      log,
      envName: 'production',
      maxDecompressedBytes: 64 * 1024 * 1024,
      client,
      onChange: (keys) => void handed.push(...keys),
    });
    try {
      await waitFor(async () => (await mirror.syncOnce()).downloaded.length > 0, 'the good object mirrored', 15_000);
      await mirror.syncOnce();
      expect(handed).toEqual([good]);
      expect(mirror.lastError).toBeUndefined();
      const skipped = logged.filter((e) => e.event === 's3.key_skipped');
      expect(skipped.map((e) => [e.level, e.key, e.code])).toEqual(injected.map((k) => ['warn', k, 'BAD_PATH'])); // once each
      expect(skipped.map((e) => e.why)).toEqual([
        'the key has a "." or ".." segment: it would lead outside the mirror folder; not mirrored',
        'the key has a "." or ".." segment: it would lead outside the mirror folder; not mirrored',
        'a name in the key is over 255 bytes, longer than a file system takes; not mirrored',
        'the key has an empty segment (a leading "/" or "//"); not mirrored',
        'the key has an empty segment (a leading "/" or "//"); not mirrored',
        'the key has a "." or ".." segment: it would lead outside the mirror folder; not mirrored',
      ]);
      expect(readdirSync(join(dir.path, 'injected')).sort()).toEqual(['mirror']);
      expect(readdirSync(join(root, 'acme'))).toEqual([good.slice('acme/'.length)]);
    } finally {
      await mirror.close();
    }
  }, 60_000);
});
