import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../src/base/log.ts';
import { dumpCommand, failuresCommand, retryCommand } from '../../src/cli/holdings-commands.ts';
import type { Output } from '../../src/cli/output.ts';
import { loadConfig } from '../../src/config/index.ts';
import { Ingestor, InlinePreparer } from '../../src/ingest/index.ts';
import { classifyStoreError, LOW_SPACE_BYTES } from '../../src/store/environment/index.ts';
import { Store } from '../../src/store/index.ts';
import {
  runCli,
  startDaemon,
  type TestConfig,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';

/**
 * Full store and full disk (docs/reliability.md, "Full store and disk"): a store write that fails for want of room
 * is retried, then quarantined with its own code (STORE_FULL, DISK_FULL); nothing applied changes; the daemon
 * keeps answering; once there is room, --retry applies the file.
 */

const MiB = 1024 * 1024;

/** A deposit of `n` records whose holdings take several hundred KiB of pages. */
function bigDeposit(n: number, tag: string): object[] {
  return Array.from({ length: n }, (_, i) => ({
    doi: `10.5555/${tag}.${String(i).padStart(6, '0')}`,
    accessType: 'open',
    vor: [
      {
        url: `https://acme.example/pdf/10.5555/${tag}.${String(i).padStart(6, '0')}?download=true&format=pdf`,
        contentType: 'application/pdf',
      },
    ],
  }));
}

function capturingLogger(): Logger & { lines: { level: string; event: string; [k: string]: unknown }[] } {
  const lines: { level: string; event: string; [k: string]: unknown }[] = [];
  return { lines, log: (level, event, fields) => void lines.push({ level, event, ...fields }) };
}

function memoryOutput(): Output & { lines: string[] } {
  const lines: string[] = [];
  const decoder = new TextDecoder();
  return {
    lines,
    out: (line) => void lines.push(line),
    outBytes: (bytes) =>
      void lines.push(
        ...decoder
          .decode(bytes)
          .split('\n')
          .filter((l) => l !== ''),
      ),
    err: (line) => void lines.push(`ERR ${line}`),
    wanted: () => true,
  };
}

/** The JSON log lines of a daemon (lmdb-js also writes its own, non-JSON, lines to stderr on a failed commit). */
function logEvents(log: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of log.split('\n')) {
    const at = line.indexOf('{"time"');
    if (at < 0) continue;
    try {
      out.push(JSON.parse(line.slice(at)));
    } catch {
      // not one of ours
    }
  }
  return out;
}

function daemonUrl(log: string): string {
  const started = logEvents(log).find((e) => e.event === 'daemon.started');
  return started!.url as string;
}

/** A running daemon on `cfg`, with its URL once it listens; stopped (and its exit code checked) by `stop`. */
async function runningDaemon(cfg: TestConfig) {
  const d = startDaemon(cfg.path);
  await waitForLog(d, 'daemon.started');
  return { ...d, url: daemonUrl(d.log()), events: () => logEvents(d.log()) };
}

async function updatesAnswer(url: string): Promise<number> {
  const r = await fetch(`${url}/v2.2/updates`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: '{"dois":["10.5555/first.1"]}',
  });
  return r.status;
}

describe('the one rule that names a failed store write', () => {
  const plenty = () => 10 * 1024 * MiB;
  const none = () => 0;
  test('MDB_MAP_FULL (by its code or its text) is STORE_FULL, telling the operator to raise store.mapSizeGiB', () => {
    for (const e of [
      Object.assign(new Error('MDB_MAP_FULL: Environment mapsize limit reached'), { code: -30792 }),
      new Error('MDB_MAP_FULL: Environment mapsize limit reached'),
    ]) {
      const f = classifyStoreError(e, '/srv/db/production', plenty);
      expect(f.code).toBe('STORE_FULL');
      expect(f.message).toContain('store.mapSizeGiB');
      expect(f.message).toContain('/srv/db/production');
    }
  });
  test('ENOSPC and EDQUOT are DISK_FULL, naming the store folder and the space left', () => {
    for (const e of [
      Object.assign(new Error('No space left on device'), { code: 28 }),
      Object.assign(new Error('Disk quota exceeded'), { code: 122 }),
    ]) {
      const f = classifyStoreError(e, '/srv/db/production', () => 12 * 1024);
      expect(f.code).toBe('DISK_FULL');
      expect(f.message).toContain('/srv/db/production');
      expect(f.message).toContain('12 KiB available');
    }
  });
  test("EIO (LMDB's word for a short write) is DISK_FULL only on a filesystem with little room left", () => {
    const eio = Object.assign(new Error('Input/output error'), { code: 5 });
    expect(classifyStoreError(eio, '/srv/db/production', none).code).toBe('DISK_FULL');
    expect(classifyStoreError(eio, '/srv/db/production', () => LOW_SPACE_BYTES - 1).code).toBe('DISK_FULL');
    expect(classifyStoreError(eio, '/srv/db/production', plenty)).toEqual({
      code: 'APPLY_FAILED',
      message: 'the store transaction failed: Input/output error',
    });
    expect(classifyStoreError(eio, '/srv/db/production', () => undefined).code).toBe('APPLY_FAILED');
  });
  test("anything else is APPLY_FAILED with the error's text", () => {
    expect(classifyStoreError(new Error('MDB_BAD_TXN: Transaction must abort'), '/x', plenty)).toEqual({
      code: 'APPLY_FAILED',
      message: 'the store transaction failed: MDB_BAD_TXN: Transaction must abort',
    });
    expect(classifyStoreError('weird', '/x', plenty).code).toBe('APPLY_FAILED');
  });
});

/** What lmdb-js throws when a put finds the map full (LMDB's MDB_MAP_FULL, its code as `code`). */
function mapFullError(): Error {
  return Object.assign(new Error('MDB_MAP_FULL: Environment mapsize limit reached'), { code: -30792 });
}

type Puttable = { putSync: (...args: unknown[]) => unknown };

/**
 * Makes the store's sub-database `name` behave as on a full map for the puts `full` picks (given the key as text):
 * they throw what lmdb-js throws. Returns the function that gives the room back.
 */
function fillMap(store: Store, name: 'holdings' | 'files', full: (key: string) => boolean): () => void {
  const db = (store as unknown as { dbs: Record<string, Puttable> }).dbs[name]!;
  const own = Object.hasOwn(db, 'putSync');
  const put = db.putSync;
  db.putSync = function (this: unknown, ...args: unknown[]) {
    const key = args[0] instanceof Uint8Array ? new TextDecoder().decode(args[0]) : String(args[0]);
    if (full(key)) throw mapFullError();
    return put.apply(this, args);
  };
  return () => {
    if (own) db.putSync = put;
    else delete (db as Partial<Puttable>).putSync;
  };
}

function historyDump(store: Store): string {
  const io = memoryOutput();
  dumpCommand(store, { history: true }, io);
  return io.lines.join('\n');
}

describe('a store whose LMDB map is full (STORE_FULL)', () => {
  test('a tiny store.mapSizeGiB is not a cap: lmdb-js grows the map, so a deposit bigger than the map applies', async () => {
    const dir = tempDir('doi-holdings-tiny-map-');
    const cfg = writeConfig(dir.path);
    writeFileSync(cfg.path, (await Bun.file(cfg.path).text()).replace('mapSizeGiB = 1', 'mapSizeGiB = 0.001'));
    const daemon = await runningDaemon(cfg);
    try {
      writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/first.1', accessType: 'open' }], { mtime: 1_000 });
      await waitFor(() => daemon.events().some((e) => e.event === 'file.applied'), 'the first deposit applied');
      const big = writeDeposit(cfg.bucket, 'acme', bigDeposit(10_000, 'big'), { mtime: 2_000 });
      await waitFor(
        () => daemon.events().some((e) => e.event === 'file.applied' && e.key === big),
        'the big deposit applied',
        30_000,
      );
      const mapBytes = 0.001 * 1024 ** 3; // 1 MiB
      expect(statSync(join(cfg.store, 'production', 'data.mdb')).size).toBeGreaterThan(2 * mapBytes);
      expect(daemon.events().filter((e) => e.event === 'file.retry' || e.event === 'file.quarantined')).toEqual([]);
    } finally {
      const code = await daemon.stop();
      dir.remove();
      expect(code).toBe(0);
    }
  }, 45_000);

  test('a put that finds the map full: retried, quarantined STORE_FULL, nothing of it committed; a quarantine that cannot be written keeps the file; once there is room the ingestor and --retry apply them', async () => {
    const dir = tempDir('doi-holdings-map-full-');
    const cfg = writeConfig(dir.path);
    const config = loadConfig(cfg.path, {});
    const store = Store.open(config.store.dir, 'production', { mapSizeBytes: config.store.mapSizeBytes });
    const log = capturingLogger();
    const ingestor = new Ingestor({
      env: 'production',
      store,
      root: cfg.bucket,
      platforms: new Set(['acme']),
      settings: { ...config.ingest, maxTries: 3, retryBaseMs: 5 },
      log,
      preparer: new InlinePreparer(),
    });
    const ingest = async (keys: string[]) => {
      await ingestor.submit(keys);
      await ingestor.idle();
    };
    try {
      await ingest([
        writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/first.1', accessType: 'open' }], { mtime: 1_000 }),
      ]);
      const before = historyDump(store);
      const seq = store.appliedSeq().seq;

      // the map fills part-way through the file: 100 holdings are written, then a put fails
      let puts = 0;
      let roomForHoldings = fillMap(store, 'holdings', () => ++puts > 100);
      const big = writeDeposit(cfg.bucket, 'acme', bigDeposit(500, 'big'), { mtime: 2_000 });
      await ingest([big]);
      expect(log.lines.filter((l) => l.event === 'file.retry').map((l) => [l.key, l.code])).toEqual([
        [big, 'STORE_FULL'],
        [big, 'STORE_FULL'],
      ]);
      expect(store.fileEntry(big)).toMatchObject({ outcome: 'quarantined', code: 'STORE_FULL', tries: 3 });
      expect(store.fileEntry(big)!.message).toContain('raise store.mapSizeGiB');
      expect(historyDump(store)).toBe(before); // the 100 puts were rolled back with the rest
      expect(store.appliedSeq().seq).toBe(seq);
      expect(ingestor.stats.storeFull(seq)).toMatchObject({ code: 'STORE_FULL' });
      const failures = memoryOutput();
      failuresCommand(store, failures);
      expect(failures.lines.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ kind: 'quarantined', key: big, code: 'STORE_FULL' }),
      ]);

      // --retry while the map is still full, and the ledger full too: reported, nothing written
      let roomForLedger = fillMap(store, 'files', () => true);
      const stillFull = memoryOutput();
      expect(await retryCommand(big, store, 'production', config, stillFull)).toBe(1);
      expect(JSON.parse(stillFull.lines[0]!)).toMatchObject({ key: big, outcome: 'failed', code: 'STORE_FULL' });
      expect(JSON.parse(stillFull.lines[0]!).message).toContain('its quarantine could not be recorded either');
      expect(store.fileEntry(big)).toMatchObject({ outcome: 'quarantined', code: 'STORE_FULL', tries: 3 });

      // the daemon's ingestor: a file whose quarantine cannot be written is kept, and holds back the files after it,
      // small ones that would fit too: `later` in its batch, `last` in the batch parsed while that one was applied
      roomForLedger();
      roomForHoldings();
      const next = writeDeposit(cfg.bucket, 'acme', bigDeposit(50, 'next'), { mtime: 3_000 });
      const later = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/later.1', accessType: 'paid' }], {
        mtime: 4_000,
      });
      const last = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/last.1', accessType: 'free' }], { mtime: 5_000 });
      roomForHoldings = fillMap(store, 'holdings', (key) => key.startsWith('10.5555/next.'));
      roomForLedger = fillMap(store, 'files', (key) => key === next);
      await ingestor.submit([next, later, last]);
      await waitFor(
        () => log.lines.filter((l) => l.event === 'file.quarantine_failed' && l.key === next).length >= 2,
        'two failed quarantines',
      );
      expect(log.lines.find((l) => l.event === 'file.quarantine_failed')).toMatchObject({
        key: next,
        code: 'STORE_FULL',
        fileCode: 'STORE_FULL',
      });
      for (const key of [next, later, last]) expect(store.fileEntry(key)).toBeUndefined();
      expect(log.lines.filter((l) => (l.key === later || l.key === last) && l.event !== 'file.parsed')).toEqual([]); // never tried
      expect(ingestor.stats.queueDepth).toBe(3);
      expect(historyDump(store)).toBe(before);

      // room again (the operator raised store.mapSizeGiB and restarted): the kept files apply in order by themselves
      roomForLedger();
      roomForHoldings();
      await ingestor.idle();
      expect([next, later, last].map((key) => store.fileEntry(key)?.seq)).toEqual([seq + 1, seq + 2, seq + 3]);
      expect(ingestor.stats.storeFull(store.appliedSeq().seq)).toBeUndefined();
      const retried = memoryOutput();
      expect(await retryCommand(big, store, 'production', config, retried)).toBe(0);
      expect(JSON.parse(retried.lines[0]!)).toMatchObject({ key: big, outcome: 'applied' });
      expect([...store.liveHoldings()]).toHaveLength(1 + 500 + 50 + 1 + 1);
    } finally {
      await ingestor.close();
      await store.close();
      dir.remove();
    }
  });
});

/** Can this process mount a tmpfs (root, and a kernel and container that allow it)? The reason when not. */
function mountTmpfs(dir: string): string | undefined {
  mkdirSync(dir, { recursive: true });
  const r = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stderr: 'pipe' });
  if (r.exitCode !== 0)
    // on one line: it goes into the names of the tests it skips
    return `mount -t tmpfs refused (exit ${r.exitCode}): ${r.stderr.toString().trim().replace(/\s+/g, ' ') || 'no message'}`;
  return undefined;
}

/** Unmounts, lazily when something still holds it (a daemon that did not stop). */
function unmount(dir: string): void {
  if (Bun.spawnSync(['umount', dir], { stderr: 'pipe' }).exitCode !== 0)
    Bun.spawnSync(['umount', '-l', dir], { stderr: 'pipe' });
}

/** Asked once when the file loads, so that each test can say why it does not run. */
function tmpfsRefusal(): string | undefined {
  const probe = tempDir('doi-holdings-mount-probe-');
  try {
    const refusal = mountTmpfs(probe.path);
    if (!refusal) unmount(probe.path);
    return refusal;
  } finally {
    probe.remove();
  }
}
const refused = tmpfsRefusal();

/**
 * A test on the small filesystem. Where no tmpfs can be mounted (not root, or a container that refuses it) it is
 * skipped with the reason in its name, so the test output says why; under CI, where the real full disk must be
 * tested, it fails instead, saying why.
 */
function fullDiskTest(name: string, fn: () => Promise<void>, timeoutMs: number): void {
  if (refused === undefined) test(name, fn, timeoutMs);
  else if (process.env.CI)
    test(name, () => {
      throw new Error(`the full-disk tests need a tmpfs, and CI is set (CI=${process.env.CI}): ${refused}`);
    });
  else test.skip(`${name} [skipped: ${refused}]`, fn, timeoutMs);
}
let mountDir: ReturnType<typeof tempDir>;
let mountPoint = '';

/** A config whose store is on the small filesystem, in a folder of its own, and a daemon on it. */
async function daemonOnSmallFs(name: string) {
  const dir = tempDir('doi-holdings-full-disk-cfg-');
  const cfg = writeConfig(dir.path);
  const storeDir = join(mountPoint, name);
  writeFileSync(cfg.path, (await Bun.file(cfg.path).text()).replace('dir = "db"', `dir = "${storeDir}"`));
  const daemon = await runningDaemon(cfg);
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/first.1', accessType: 'open' }], { mtime: 1_000 });
  await waitFor(() => daemon.events().some((e) => e.event === 'file.applied'), 'the first deposit applied');
  const history = await runCli(['--dump', '--history', '--config', cfg.path]);
  expect(history.lines).toHaveLength(1);
  return { dir, cfg, daemon, storeDir, history: history.stdout };
}

/** Fills the small filesystem but for `leaveBytes`. */
function fill(leaveBytes: number): void {
  const fs = statfsSync(mountPoint);
  writeFileSync(
    join(mountPoint, 'filler'),
    Buffer.alloc(Math.max(0, Number(fs.bavail) * Number(fs.bsize) - leaveBytes)),
  );
}

async function health(
  url: string,
): Promise<{ status: number; failed: string[]; storeFull: string | null; queueDepth: number }> {
  const r = await fetch(`${url}/healthz`);
  const body = (await r.json()) as { failed?: string[]; production: { storeFull: string | null; queueDepth: number } };
  return {
    status: r.status,
    failed: body.failed ?? [],
    storeFull: body.production.storeFull,
    queueDepth: body.production.queueDepth,
  };
}

describe('a store on a filesystem that fills (tmpfs, 8 MiB)', () => {
  beforeAll(() => {
    if (refused) return;
    mountDir = tempDir('doi-holdings-full-disk-');
    mountPoint = join(mountDir.path, 'small-fs');
    const again = mountTmpfs(mountPoint);
    if (again) throw new Error(again);
  });
  afterAll(() => {
    if (refused) return;
    unmount(mountPoint);
    mountDir.remove();
  });

  fullDiskTest(
    'a deposit that does not fit: retried, quarantined DISK_FULL naming the store folder; nothing applied changes; the daemon answers and /healthz names it; once the filler is gone, --retry applies it',
    async () => {
      const { dir, cfg, daemon, storeDir, history } = await daemonOnSmallFs('quarantined');
      try {
        fill(512 * 1024);
        const big = writeDeposit(cfg.bucket, 'acme', bigDeposit(10_000, 'big'), { mtime: 2_000 });
        await waitFor(() => daemon.events().some((e) => e.event === 'file.quarantined'), 'the quarantine', 30_000);
        const events = daemon.events();
        expect(events.filter((e) => e.event === 'file.retry').map((e) => [e.key, e.code])).toEqual([
          [big, 'DISK_FULL'],
          [big, 'DISK_FULL'],
        ]);
        expect(events.find((e) => e.event === 'file.quarantined')).toMatchObject({ key: big, code: 'DISK_FULL' });

        expect(await updatesAnswer(daemon.url)).toBe(200);
        const sick = await health(daemon.url);
        expect(sick).toMatchObject({ status: 503, storeFull: 'DISK_FULL' });
        expect(sick.failed[0]).toStartWith('production: store full: DISK_FULL: ');
        const failures = await runCli(['--failures', '--config', cfg.path]);
        expect(failures.lines.map((l) => JSON.parse(l))).toEqual([
          expect.objectContaining({ key: big, code: 'DISK_FULL' }),
        ]);
        expect(JSON.parse(failures.lines[0]!).message).toContain(join(storeDir, 'production'));
        expect((await runCli(['--dump', '--history', '--config', cfg.path])).stdout).toBe(history);
        expect(daemon.log()).not.toContain('Commit failed');

        rmSync(join(mountPoint, 'filler'));
        const retried = await runCli(['--retry', big, '--config', cfg.path]);
        expect(JSON.parse(retried.lines[0]!)).toMatchObject({ key: big, outcome: 'applied' });
        expect((await runCli(['--dump', '--config', cfg.path])).lines).toHaveLength(10_001);
        await waitFor(async () => (await health(daemon.url)).status === 200, '/healthz 200 once a file applied');
      } finally {
        rmSync(join(mountPoint, 'filler'), { force: true });
        const code = await daemon.stop();
        dir.remove();
        expect(code).toBe(0);
      }
    },
    60_000,
  );

  fullDiskTest(
    'a filesystem full to the last byte: the quarantine cannot be written either, so the file is kept (never dropped) and holds back the next; once the filler is gone the daemon applies both in order',
    async () => {
      const { dir, cfg, daemon, history } = await daemonOnSmallFs('kept');
      try {
        fill(0);
        const big = writeDeposit(cfg.bucket, 'acme', bigDeposit(10_000, 'big'), { mtime: 2_000 });
        // the next deposit once the first is being retried (the folder watch hands on files in the order they settle)
        await waitFor(() => daemon.events().some((e) => e.event === 'file.retry'), 'a retry', 30_000);
        const later = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/later.1', accessType: 'paid' }], {
          mtime: 3_000,
        });
        await waitFor(
          () => daemon.events().filter((e) => e.event === 'file.quarantine_failed').length >= 2,
          'two failed quarantines',
          30_000,
        );
        const events = daemon.events();
        expect(events.filter((e) => e.event === 'file.retry').map((e) => [e.key, e.code])).toEqual([
          [big, 'DISK_FULL'],
          [big, 'DISK_FULL'],
        ]);
        expect(events.find((e) => e.event === 'file.quarantine_failed')).toMatchObject({
          key: big,
          code: 'DISK_FULL',
          fileCode: 'DISK_FULL',
        });
        expect(
          events.filter(
            (e) =>
              e.event === 'file.quarantined' ||
              (e.event === 'file.applied' && e.key !== events.find((x) => x.event === 'file.applied')!.key),
          ),
        ).toEqual([]);

        expect(await updatesAnswer(daemon.url)).toBe(200);
        // both wait: the kept file, and the one after it, held back
        await waitFor(async () => (await health(daemon.url)).queueDepth === 2, 'two files waiting');
        expect(await health(daemon.url)).toMatchObject({ status: 503, storeFull: 'DISK_FULL' });
        expect(daemon.events().some((e) => e.key === later && e.event !== 'file.applied')).toBe(false);
        expect((await runCli(['--failures', '--config', cfg.path])).lines).toEqual([]);
        expect((await runCli(['--dump', '--history', '--config', cfg.path])).stdout).toBe(history);

        rmSync(join(mountPoint, 'filler'));
        await waitFor(
          () => daemon.events().some((e) => e.event === 'file.applied' && e.key === later),
          'the daemon applying the kept files',
          30_000,
        );
        const applied = daemon
          .events()
          .filter((e) => e.event === 'file.applied')
          .map((e) => e.key);
        expect(applied.slice(1)).toEqual([big, later]);
        expect(await health(daemon.url)).toMatchObject({ status: 200, storeFull: null });

        // full again, and stopped while a file fails: the daemon still exits cleanly (lmdb-js's close waited forever
        // on a failed commit's flush before the store settled it)
        fill(0);
        const another = writeDeposit(cfg.bucket, 'acme', bigDeposit(10_000, 'another'), { mtime: 5_000 });
        await waitFor(
          () => daemon.events().some((e) => e.event === 'file.retry' && e.key === another),
          'a failed write',
          30_000,
        );
        // every failed commit's error reached the store (no promise of lmdb-js's left rejected without a handler)
        expect(daemon.log()).not.toContain('Commit failed');
      } finally {
        rmSync(join(mountPoint, 'filler'), { force: true });
        const code = await daemon.stop();
        dir.remove();
        expect(code).toBe(0);
      }
    },
    60_000,
  );
});
