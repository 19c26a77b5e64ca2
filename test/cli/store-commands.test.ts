import { afterEach, beforeEach, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startDaemon, tempDir, waitForLog, writeConfig, writeDeposit, type TestConfig } from '../support/fixtures.ts';

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
    writeDeposit(cfg.bucket, 'acme', [
      { doi: '10.5555/a1', accessType: 'open' },
      { doi: '10.5555/a2', accessType: 'paid' },
      { doi: '10.5555/a3' },
      { doi: '10.5555/a4', accessType: 'permFree' },
    ], { mtime: 1000 }),
    writeDeposit(cfg.bucket, 'beta', [{ doi: '10.5555/b1', accessType: 'free' }, { doi: '10.5555/a1', accessType: 'paid' }], { mtime: 1100 }),
    // a removal: a3 goes, a2 changes
    writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/a3', deleted: true }, { doi: '10.5555/a2', accessType: 'open' }], { mtime: 1200 }),
  ];
  const r = await runCli(['--ingest', '--config', cfg.path, ...files.map((f) => join(cfg.bucket, f))]);
  expect(r.code).toBe(0);
  const bad = writeDeposit(cfg.bucket, 'acme', [], { bytes: new Uint8Array([1, 2, 3]) });
  expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, bad)])).code).toBe(1); // quarantined: not gzip
}

test('--stats: holdings per platform and access type, ledger counts, file figures; per environment', async () => {
  await ingestSample();
  await runCli(['--ingest', '--env', 'staging', '--config', cfg.path, join(cfg.staging, writeDeposit(cfg.staging, 'acme', [{ doi: '10.5555/s1' }]))]);
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
  expect(staging).toMatchObject({ env: 'staging', holdings: { total: 1, byPlatform: { acme: { total: 1, none: 1 } } } });
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
    expect(report).toMatchObject({ env: 'production', backup: join(target, 'production', 'data.mdb'), schemaVersion: 2, lastAppliedSeq: 3, liveHoldings: 5 });
    expect(existsSync(`${report.backup}.partial`)).toBe(false);

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
});

test('--backup to a folder that cannot be made is BACKUP_FAILED, one line and exit 2, no stack trace', async () => {
  const key = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/b1' }]);
  expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)])).code).toBe(0);
  writeFileSync(join(dir.path, 'a-file'), 'x');
  const r = await runCli(['--backup', join(dir.path, 'a-file', 'backups'), '--env', 'production', '--config', cfg.path]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('BACKUP_FAILED');
  expect(r.stderr).toContain(`cannot write ${join(dir.path, 'a-file', 'backups', 'production', 'data.mdb')}`);
  expect(r.stderr).not.toContain('    at ');
});

test('--backup into a folder where one environment holds a backup already writes nothing: BACKUP_EXISTS before any copy', async () => {
  await ingestSample();
  await runCli(['--ingest', '--env', 'staging', '--config', cfg.path, join(cfg.staging, writeDeposit(cfg.staging, 'acme', [{ doi: '10.5555/s1' }]))]);
  const target = join(dir.path, 'backups', 'bk2');
  expect((await runCli(['--backup', target, '--env', 'staging', '--config', cfg.path])).code).toBe(0);
  // production comes first in the order of environments, staging's copy is there already
  const r = await runCli(['--backup', target, '--config', cfg.path]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(`BACKUP_EXISTS: ${join(target, 'staging', 'data.mdb')} exists already`);
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
