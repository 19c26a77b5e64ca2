import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { closeSync, constants, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BUN, dump, REPO, runCli, type TestConfig, tempDir, writeConfig, writeDeposit } from '../support/fixtures.ts';

/**
 * What the CLI does when stdout cannot take its output (README, "exit codes"). A reader that closes the pipe
 * (`--dump | head`) took what it wanted: quiet, and the command's own exit code. Any other failure (here
 * /dev/full, ENOSPC) is one OUTPUT_FAILED line on stderr and exit 2. Neither stops an --ingest part-way.
 */

const MAIN = join(REPO, 'src/main.ts');
const OUTPUT_FAILED = /^doi-holdings: OUTPUT_FAILED: cannot write the output: ENOSPC: no space left on device[^\n]*\n$/;

/** The real program with stdout going to /dev/full: every write to it fails with ENOSPC. */
async function toFullDisk(args: string[]): Promise<{ code: number; stderr: string }> {
  const full = openSync('/dev/full', 'w');
  try {
    const proc = Bun.spawn([BUN, MAIN, ...args], { cwd: REPO, stdout: full, stderr: 'pipe' });
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    return { code, stderr };
  } finally {
    closeSync(full);
  }
}

/** The real program writing into a pipe whose reader has closed it before the first line: EPIPE. */
async function toClosedPipe(args: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([BUN, MAIN, ...args], { cwd: REPO, stdout: 'pipe', stderr: 'pipe' });
  await proc.stdout.cancel(); // the read end closes, as head's does once it has its lines
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  return { code, stderr };
}

/** `n` deposits for `bucket` of one good DOI and 40 rejected lines each: their --ingest reports pass 64 KiB. */
function faultyDeposits(bucket: string, n: number): { paths: string[]; dois: string[] } {
  const dois = Array.from({ length: n }, (_, i) => `10.5555/part.${String(i).padStart(3, '0')}`);
  const bad = Array.from({ length: 40 }, (_, j) => ({ doi: `not-a-doi-${j}-${'x'.repeat(40)}` }));
  return {
    paths: dois.map((doi) => join(bucket, writeDeposit(bucket, 'acme', [{ doi, accessType: 'open' }, ...bad]))),
    dois,
  };
}

describe('stdout that fails', () => {
  let dir: ReturnType<typeof tempDir>;
  let cfg: TestConfig;
  const HOLDINGS = 5000;
  beforeAll(async () => {
    dir = tempDir();
    cfg = writeConfig(dir.path);
    // over 64 KiB of --dump (one write at least before the end), and one quarantined file for --failures
    const many = writeDeposit(
      cfg.bucket,
      'acme',
      Array.from({ length: HOLDINGS }, (_, i) => ({ doi: `10.5555/many.${i}`, accessType: 'open' })),
    );
    const broken = writeDeposit(cfg.bucket, 'acme', [], { bytes: new Uint8Array([1, 2, 3]) });
    expect(
      (await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, many), join(cfg.bucket, broken)])).code,
    ).toBe(1);
  });
  afterAll(() => dir.remove());

  test('--dump, --dump --history and --failures into a full disk: OUTPUT_FAILED on stderr, exit 2', async () => {
    for (const command of [['--dump'], ['--dump', '--history'], ['--failures']]) {
      const r = await toFullDisk([...command, '--config', cfg.path]);
      expect([command, r.code]).toEqual([command, 2]);
      expect(r.stderr).toMatch(OUTPUT_FAILED);
    }
  });

  test('--validate of a bad file into a full disk: the lost report is the fault told, exit 2', async () => {
    const bad = join(
      dir.path,
      'outbox',
      writeDeposit(join(dir.path, 'outbox'), 'acme', [{ doi: '10.5555/ok' }, 'not json']),
    );
    const r = await toFullDisk(['--validate', '--config', cfg.path, bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(OUTPUT_FAILED);
  });

  test('--dump into a pipe its reader closed ends quietly with exit 0', async () => {
    for (const command of [['--dump'], ['--dump', '--history']]) {
      expect(await toClosedPipe([...command, '--config', cfg.path])).toEqual({ code: 0, stderr: '' });
    }
  });

  test('--validate into a pipe its reader closed still exits 1 for the faults it found', async () => {
    const outbox = join(dir.path, 'outbox');
    // 2,000 rejected lines: the report passes 64 KiB, so it is written (and fails) while files remain to check
    const bad = join(
      outbox,
      writeDeposit(
        outbox,
        'acme',
        Array.from({ length: 2000 }, (_, i) => `not json ${i}`),
      ),
    );
    const clean = join(outbox, writeDeposit(outbox, 'acme', [{ doi: '10.5555/ok' }]));
    expect(await toClosedPipe(['--validate', '--config', cfg.path, bad, clean])).toEqual({ code: 1, stderr: '' });
  });

  test('a reader that takes nothing for longer than 10 s (a non-blocking pipe) still gets the whole --dump', async () => {
    const fifo = join(dir.path, 'slow-reader');
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const proc = Bun.spawn([BUN, join(REPO, 'test/support/nonblocking-stdout.ts'), '--dump', '--config', cfg.path], {
      cwd: REPO,
      stdout: writer,
      stderr: 'pipe',
    });
    closeSync(writer);
    try {
      await Bun.sleep(12_000); // the program once took 10 s of a full pipe for a reader gone, and stopped
      const chunks: Buffer[] = [];
      for (const buf = Buffer.alloc(1 << 16); ; ) {
        let n: number;
        try {
          n = readSync(reader, buf);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
          await Bun.sleep(5);
          continue;
        }
        if (n === 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
      }
      const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect([code, stderr]).toEqual([0, '']);
      const lines = Buffer.concat(chunks).toString().split('\n');
      expect(lines.pop()).toBe('');
      expect(lines).toHaveLength(HOLDINGS);
    } finally {
      closeSync(reader);
      rmSync(fifo, { force: true });
    }
  });
});

describe('--ingest whose stdout fails', () => {
  let dir: ReturnType<typeof tempDir>;
  let cfg: TestConfig;
  beforeAll(() => {
    dir = tempDir();
    cfg = writeConfig(dir.path);
  });
  afterAll(() => dir.remove());

  test('into a full disk: every file is applied, OUTPUT_FAILED said once, exit 2', async () => {
    const { paths, dois } = faultyDeposits(cfg.staging, 30);
    const r = await toFullDisk(['--ingest', '--env', 'staging', '--config', cfg.path, ...paths]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(OUTPUT_FAILED);
    expect((await dump(cfg.path, ['--env', 'staging'])).map((l) => l.doi)).toEqual(dois);
  });

  test('stdout and stderr both into a full disk (>file 2>&1): every file is applied all the same, exit 2', async () => {
    const { paths, dois } = faultyDeposits(cfg.staging, 30);
    const full = openSync('/dev/full', 'w');
    try {
      const proc = Bun.spawn([BUN, MAIN, '--ingest', '--env', 'staging', '--config', cfg.path, ...paths], {
        cwd: REPO,
        stdout: full,
        stderr: full,
      });
      expect(await proc.exited).toBe(2);
    } finally {
      closeSync(full);
    }
    const staged = (await dump(cfg.path, ['--env', 'staging'])).map((l) => l.doi);
    for (const doi of dois) expect(staged).toContain(doi);
  });

  test('into a pipe its reader closed: every file is applied, quietly, and the rejected lines still exit 1', async () => {
    const { paths, dois } = faultyDeposits(cfg.bucket, 30);
    expect(await toClosedPipe(['--ingest', '--config', cfg.path, ...paths])).toEqual({ code: 1, stderr: '' });
    expect((await dump(cfg.path)).map((l) => l.doi)).toEqual(dois);
  });
});
