import { afterEach, beforeEach, expect, test } from 'bun:test';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  dump,
  gzLines,
  startDaemon,
  type TestConfig,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let daemons: { stop(): Promise<number> }[] = [];

beforeEach(() => {
  dir = tempDir();
  cfg = writeConfig(dir.path);
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  dir.remove();
});

function daemon() {
  const d = startDaemon(cfg.path);
  daemons.push(d);
  return d;
}

test('a file dropped into the bucket folder while the daemon runs shows up in --dump', async () => {
  const d = daemon();
  await waitForLog(d, 'daemon.started');
  writeDeposit(cfg.bucket, 'acme', [
    { doi: '10.5555/Live.1', accessType: 'open', vor: [{ url: 'https://acme.example/pdf/10.5555/Live.1' }] },
  ]);
  const lines = await waitFor(async () => {
    const l = await dump(cfg.path);
    return l.length === 1 ? l : undefined;
  }, 'the holding in --dump');
  expect(lines[0]).toMatchObject({ env: 'production', platform: 'acme', doi: '10.5555/Live.1', accessType: 'open' });
});

test('deposits written back to back into platform folders just created are all applied, not left for a restart', async () => {
  // Across processes the folder watch's race shows rarely (1-3 times in 12 runs of a reliability test, before the
  // new-folder listing); test/bucket/local-watch.test.ts writes in the watch's own process, where it shows 4 in 10.
  const platforms = ['acme', 'beta', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8'];
  cfg = writeConfig(
    dir.path,
    platforms
      .slice(2)
      .map((p) => `[[platforms]]\nname = "${p}"\n`)
      .join('\n'),
  );
  const d = daemon();
  await waitForLog(d, 'daemon.started');
  const bytes = (p: string, n: number) => gzLines([{ doi: `10.5555/${p}.${n}`, accessType: 'open' }]);
  let files = 0;
  for (const bucket of [cfg.bucket, cfg.staging])
    for (const p of platforms) {
      const [a, b] = [bytes(p, 1), bytes(p, 2)];
      writeDeposit(bucket, p, [], { bytes: a });
      await Bun.sleep(1);
      writeDeposit(bucket, p, [], { bytes: b });
      files += 2;
    }
  const applied = () =>
    d
      .log()
      .split('\n')
      .filter((l) => l.includes('"event":"file.applied"')).length;
  await waitFor(() => applied() === files, `${files} files applied`, 10_000);
  expect((await dump(cfg.path)).length).toBe(2 * platforms.length);
});

test('a restart applies the files that arrived while the daemon was down, in LastModified order', async () => {
  const first = daemon();
  await waitForLog(first, 'daemon.started');
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/a', accessType: 'paid' }]);
  await waitFor(async () => (await dump(cfg.path)).length === 1, 'first file applied');
  expect(await first.stop()).toBe(0);
  daemons = [];
  writeDeposit(
    cfg.bucket,
    'acme',
    [
      { doi: '10.5555/b', accessType: 'open' },
      { doi: '10.5555/a', deleted: true },
    ],
    { mtime: Date.now() / 1000 + 20 },
  );
  writeDeposit(
    cfg.bucket,
    'beta',
    [
      { doi: '10.5555/b', accessType: 'free' },
      { doi: '10.5555/a', accessType: 'free' },
    ],
    { mtime: Date.now() / 1000 + 10 },
  );
  const second = daemon();
  await waitForLog(second, 'daemon.started');
  const lines = await waitFor(async () => {
    const l = await dump(cfg.path);
    return l.length === 3 ? l : undefined;
  }, 'three holdings');
  expect(lines.map((l) => `${l.doi}@${l.platform}:${l.accessType}`)).toEqual([
    '10.5555/a@beta:free',
    '10.5555/b@acme:open',
    '10.5555/b@beta:free',
  ]);
  // the port opened before the bucket was scanned (at 100M holdings the scan alone takes a second)
  const log = second.log();
  expect(log).toContain('"event":"daemon.listening"');
  expect(log.indexOf('"event":"daemon.listening"')).toBeLessThan(log.indexOf('"event":"file.applied"'));
});

test('a file moved in with an older LastModified than files applied leaves them what they say, and applies the rest', async () => {
  const d = daemon();
  await waitForLog(d, 'daemon.started');
  const now = Math.floor(Date.now() / 1000);
  writeDeposit(
    cfg.bucket,
    'acme',
    [
      { doi: '10.5555/d', accessType: 'paid' },
      { doi: '10.5555/e', accessType: 'paid' },
    ],
    { mtime: now },
  );
  await waitFor(async () => (await dump(cfg.path)).length === 2, 'the newer file applied');
  // as `cp -p` then a rename would place it: whole, with its old mtime, at once
  const older = writeDeposit(
    join(dir.path, 'outbox'),
    'acme',
    [
      { doi: '10.5555/d', accessType: 'open' },
      { doi: '10.5555/f', accessType: 'open' },
    ],
    { mtime: now - 100 },
  );
  renameSync(join(dir.path, 'outbox', older), join(cfg.bucket, older));
  const lines = await waitFor(async () => {
    const l = await dump(cfg.path);
    return l.length === 3 ? l : undefined;
  }, 'three holdings');
  expect(lines.map((l) => `${l.doi}:${l.accessType}`)).toEqual(['10.5555/d:paid', '10.5555/e:paid', '10.5555/f:open']);
  const applied = new RegExp(`"event":"file.applied".*"key":"${older}".*"overtaken":1`);
  await waitFor(() => applied.test(d.log()), 'its file.applied line, one record overtaken');
  expect(d.log()).toContain(`"event":"file.late","env":"production","key":"${older}"`);
});

test('a second daemon on the address of a running one does not start (exit 2): they would share its connections', async () => {
  const first = daemon();
  await waitForLog(first, 'daemon.started');
  const port = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(first.log())![1];
  const other = tempDir();
  try {
    const second = writeConfig(other.path);
    writeFileSync(
      second.path,
      readFileSync(second.path, 'utf8').replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${port}"`),
    );
    const d = startDaemon(second.path);
    expect(await d.exited).toBe(2);
    expect(d.log()).toContain('"event":"daemon.start_failed"');
  } finally {
    other.remove();
  }
});

test('files deposited to staging are not visible in production, only with --env staging', async () => {
  const d = daemon();
  await waitForLog(d, 'daemon.started');
  writeDeposit(cfg.staging, 'acme', [{ doi: '10.5555/trial', accessType: 'open' }]);
  const staged = await waitFor(async () => {
    const l = await dump(cfg.path, ['--env', 'staging']);
    return l.length === 1 ? l : undefined;
  }, 'staging holding');
  expect(staged[0]).toMatchObject({ env: 'staging', doi: '10.5555/trial' });
  expect(await dump(cfg.path)).toEqual([]);
});

test('SIGTERM stops the daemon cleanly with exit code 0', async () => {
  const d = daemon();
  await waitForLog(d, 'daemon.started');
  expect(await d.stop()).toBe(0);
  daemons = [];
  expect(existsSync(join(cfg.store, 'production', 'data.mdb'))).toBe(true);
});

test('a listen address already taken: one daemon.start_failed line and exit 2, not a stack trace', async () => {
  const taken = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  try {
    writeFileSync(
      cfg.path,
      readFileSync(cfg.path, 'utf8').replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${taken.port}"`),
    );
    const d = startDaemon(cfg.path);
    // it ends by itself (a SIGTERM sent while it exits would test the signal, not the start)
    expect(await d.exited).toBe(2);
    expect(d.log()).toContain('"event":"daemon.start_failed"');
    expect(d.log()).not.toContain('    at ');
  } finally {
    taken.stop(true);
  }
});
