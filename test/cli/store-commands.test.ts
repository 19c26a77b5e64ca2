import { afterEach, beforeEach, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUN,
  REPO,
  runCli,
  startDaemon,
  type TestConfig,
  tempDir,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';

/** --stats and --backup through the real program, with and without the daemon running. */

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
beforeEach(() => {
  dir = tempDir('doi-holdings-store-cli-');
  cfg = writeConfig(dir.path);
});
afterEach(() => dir.remove());

async function ingestSample(): Promise<void> {
  const files = [
    writeDeposit(
      cfg.bucket,
      'acme',
      [
        { doi: '10.5555/a1', accessType: 'open' },
        { doi: '10.5555/a2', accessType: 'paid' },
        { doi: '10.5555/a3' },
        { doi: '10.5555/a4', accessType: 'permFree' },
      ],
      { mtime: 1000 },
    ),
    writeDeposit(
      cfg.bucket,
      'beta',
      [
        { doi: '10.5555/b1', accessType: 'free' },
        { doi: '10.5555/a1', accessType: 'paid' },
      ],
      { mtime: 1100 },
    ),
    // a removal: a3 goes, a2 changes
    writeDeposit(
      cfg.bucket,
      'acme',
      [
        { doi: '10.5555/a3', deleted: true },
        { doi: '10.5555/a2', accessType: 'open' },
      ],
      { mtime: 1200 },
    ),
  ];
  const r = await runCli(['--ingest', '--config', cfg.path, ...files.map((f) => join(cfg.bucket, f))]);
  expect(r.code).toBe(0);
  const bad = writeDeposit(cfg.bucket, 'acme', [], { bytes: new Uint8Array([1, 2, 3]) });
  expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, bad)])).code).toBe(1); // quarantined: not gzip
}

test('--stats: holdings per platform and access type, ledger counts, file figures; per environment', async () => {
  await ingestSample();
  await runCli([
    '--ingest',
    '--env',
    'staging',
    '--config',
    cfg.path,
    join(cfg.staging, writeDeposit(cfg.staging, 'acme', [{ doi: '10.5555/s1' }])),
  ]);
  const r = await runCli(['--stats', '--config', cfg.path]);
  expect(r.code).toBe(0);
  expect(r.lines).toHaveLength(2);
  const [prod, staging] = r.lines.map((l) => JSON.parse(l));
  expect(prod).toMatchObject({
    env: 'production',
    schemaVersion: 2,
    holdings: {
      total: 5,
      byPlatform: {
        acme: { total: 3, open: 2, paid: 0, free: 0, permFree: 1, none: 0 },
        beta: { total: 2, open: 0, paid: 1, free: 1, permFree: 0, none: 0 },
      },
    },
    ledger: { applied: 3, quarantined: 1, conflicts: 0 },
    lastAppliedSeq: 3,
  });
  expect(prod.store.fileBytes).toBeGreaterThan(0);
  expect(prod.store.usedPages).toBeGreaterThan(prod.store.freePages);
  expect(staging).toMatchObject({
    env: 'staging',
    holdings: { total: 1, byPlatform: { acme: { total: 1, none: 1 } } },
  });
  const one = await runCli(['--stats', '--env', 'staging', '--config', cfg.path]);
  expect(one.lines.map((l) => JSON.parse(l).env)).toEqual(['staging']);
});

test('--backup: a compacted copy a config opens and dumps equal; never over an existing backup; while the daemon runs', async () => {
  await ingestSample();
  const daemon = startDaemon(cfg.path);
  try {
    await waitForLog(daemon, 'daemon.started');
    const target = join(dir.path, 'backups', 'monday');
    const r = await runCli(['--backup', target, '--env', 'production', '--config', cfg.path]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.lines[0]!);
    expect(report).toMatchObject({
      env: 'production',
      backup: join(target, 'production', 'data.mdb'),
      schemaVersion: 2,
      lastAppliedSeq: 3,
      liveHoldings: 5,
    });
    expect(existsSync(`${report.backup}.partial`)).toBe(false);
    // the copy was opened to check it: the lock file that made is no part of the backup
    expect(readdirSync(target, { recursive: true }).sort()).toEqual(['production', 'production/data.mdb']);

    // a config whose store.dir is the backup opens it, and it dumps equal, history and all
    const restored = join(dir.path, 'restored.toml');
    writeFileSync(restored, readFileSync(cfg.path, 'utf8').replace('dir = "db"', `dir = "${target}"`));
    for (const extra of [[], ['--history']]) {
      const a = await runCli(['--dump', '--config', cfg.path, ...extra]);
      const b = await runCli(['--dump', '--config', restored, ...extra]);
      expect(b.code).toBe(0);
      expect(b.lines.length).toBeGreaterThan(0);
      expect(b.stdout).toBe(a.stdout);
    }
    const failures = await runCli(['--failures', '--config', restored]);
    expect(failures.stdout).toContain('NOT_GZIP');

    const again = await runCli(['--backup', target, '--env', 'production', '--config', cfg.path]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('BACKUP_EXISTS');
  } finally {
    await daemon.stop();
  }
  // without --env: every configured environment (staging has an empty store, opened by the daemon)
  const all = await runCli(['--backup', join(dir.path, 'backups', 'tuesday'), '--config', cfg.path]);
  expect(all.code).toBe(0);
  expect(all.lines.map((l) => JSON.parse(l).env)).toEqual(['production', 'staging']);
  expect(existsSync(join(dir.path, 'backups', 'tuesday.partial'))).toBe(false);
  expect(readdirSync(join(dir.path, 'backups', 'tuesday'), { recursive: true }).sort()).toEqual([
    'production',
    'production/data.mdb',
    'staging',
    'staging/data.mdb',
  ]);
});

test('--backup to a folder that cannot be made is BACKUP_FAILED, one line and exit 2, no stack trace', async () => {
  const key = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/b1' }]);
  expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)])).code).toBe(0);
  writeFileSync(join(dir.path, 'a-file'), 'x');
  const r = await runCli([
    '--backup',
    join(dir.path, 'a-file', 'backups'),
    '--env',
    'production',
    '--config',
    cfg.path,
  ]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('BACKUP_FAILED');
  expect(r.stderr).toContain(`cannot write ${join(dir.path, 'a-file', 'backups')}`);
  expect(r.stderr).not.toContain('    at ');
});

test('--backup into a folder where one environment holds a backup already writes nothing: BACKUP_EXISTS before any copy', async () => {
  await ingestSample();
  await runCli([
    '--ingest',
    '--env',
    'staging',
    '--config',
    cfg.path,
    join(cfg.staging, writeDeposit(cfg.staging, 'acme', [{ doi: '10.5555/s1' }])),
  ]);
  const target = join(dir.path, 'backups', 'bk2');
  expect((await runCli(['--backup', target, '--env', 'staging', '--config', cfg.path])).code).toBe(0);
  // production comes first in the order of environments, staging's copy is there already
  const r = await runCli(['--backup', target, '--config', cfg.path]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(`BACKUP_EXISTS: ${target} exists already`);
  expect(existsSync(join(target, 'production'))).toBe(false);
});

test('--backup of every environment where one has no store yet writes nothing: STORE_NOT_MADE before any copy', async () => {
  await ingestSample(); // production's store only: staging is configured but was never made
  const target = join(dir.path, 'backups', 'bk3');
  const r = await runCli(['--backup', target, '--config', cfg.path]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain('STORE_NOT_MADE');
  expect(existsSync(join(target, 'production'))).toBe(false);
  // the same folder takes the backup once the cause is gone (here: production alone)
  expect((await runCli(['--backup', target, '--env', 'production', '--config', cfg.path])).code).toBe(0);
});

/** The program under a file size limit (the shell's ulimit -f, 512-byte blocks in sh), its signal ignored: a write past it fails (EFBIG), as on a full disk. */
async function runCliLimited(
  args: string[],
  limitKiB: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(
    ['sh', '-c', `trap '' XFSZ; ulimit -f ${limitKiB * 2}; exec "$0" "$@"`, BUN, join(REPO, 'src/main.ts'), ...args],
    { cwd: REPO, stdout: 'pipe', stderr: 'pipe' },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

test('--backup whose second environment fails part-way leaves no DIR, and no partial folder: all or nothing', async () => {
  await ingestSample(); // production: a store whose copy is some 30 KB
  const many = Array.from({ length: 9000 }, (_, i) => ({ doi: `10.5555/s${i}`, accessType: 'open' }));
  const key = writeDeposit(cfg.staging, 'acme', many);
  expect((await runCli(['--ingest', '--env', 'staging', '--config', cfg.path, join(cfg.staging, key)])).code).toBe(0);
  const target = join(dir.path, 'backups', 'wednesday');
  // staging's copy (some 500 KB) outgrows the limit, production's does not
  const r = await runCliLimited(['--backup', target, '--config', cfg.path], 200);
  expect(r.stderr).toContain('BACKUP_FAILED');
  expect(r.stderr).toContain(join('staging', 'data.mdb'));
  expect(r.code).toBe(2);
  expect(r.stdout).toBe(''); // no report of production's copy, which is gone with the rest
  expect(existsSync(target)).toBe(false);
  expect(readdirSync(join(dir.path, 'backups'))).toEqual([]);
  // once there is room the same DIR takes the whole backup
  const again = await runCli(['--backup', target, '--config', cfg.path]);
  expect(again.code).toBe(0);
  expect(again.lines.map((l) => JSON.parse(l).env)).toEqual(['production', 'staging']);
  expect(JSON.parse(again.lines[1]!).liveHoldings).toBe(9000);
});

test('--backup: an existing empty DIR (made by a script) takes the backup, one holding anything is refused; a partial folder left by a killed run is replaced', async () => {
  await ingestSample();
  const empty = join(dir.path, 'backups', 'made-by-hand');
  mkdirSync(empty, { recursive: true });
  const into = await runCli(['--backup', empty, '--env', 'production', '--config', cfg.path]);
  expect([into.code, into.stderr]).toEqual([0, '']);
  expect(readdirSync(empty)).toEqual(['production']);
  const full = join(dir.path, 'backups', 'not-empty');
  mkdirSync(full, { recursive: true });
  writeFileSync(join(full, 'notes.txt'), 'mine');
  const refused = await runCli(['--backup', full, '--env', 'production', '--config', cfg.path]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`BACKUP_EXISTS: ${full} exists already`);
  expect(readdirSync(full)).toEqual(['notes.txt']);

  const target = join(dir.path, 'backups', 'thursday');
  mkdirSync(join(`${target}.partial`, 'production'), { recursive: true });
  writeFileSync(join(`${target}.partial`, 'production', 'data.mdb'), 'half a copy');
  // the run that left it is gone: its pid file is taken over
  const dead = Bun.spawnSync(['true']).pid;
  writeFileSync(`${target}.partial.pid`, `${dead}\n`);
  // given with a trailing slash: the partial folder is still DIR's sibling, not a folder in it
  const r = await runCli(['--backup', `${target}/`, '--env', 'production', '--config', cfg.path]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.lines[0]!)).toMatchObject({ env: 'production', liveHoldings: 5 });
  expect(existsSync(`${target}.partial`)).toBe(false);
  expect(existsSync(`${target}.partial.pid`)).toBe(false);
  expect(readdirSync(target)).toEqual(['production']);
});

test('--backup to a DIR another backup is filling is refused (BACKUP_RUNNING), and its partial folder left alone', async () => {
  await ingestSample();
  const target = join(dir.path, 'backups', 'friday');
  mkdirSync(join(`${target}.partial`, 'production'), { recursive: true });
  writeFileSync(join(`${target}.partial`, 'production', 'data.mdb.partial'), 'being written');
  const other = Bun.spawn(['sleep', '30']); // stands for the running backup
  try {
    writeFileSync(`${target}.partial.pid`, `${other.pid}\n`);
    const r = await runCli(['--backup', target, '--env', 'production', '--config', cfg.path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`BACKUP_RUNNING: ${target}: another backup to it is running (process ${other.pid}`);
    expect(readFileSync(join(`${target}.partial`, 'production', 'data.mdb.partial'), 'utf8')).toBe('being written');
    expect(readFileSync(`${target}.partial.pid`, 'utf8')).toBe(`${other.pid}\n`);
    expect(existsSync(target)).toBe(false);
  } finally {
    other.kill();
  }
});
