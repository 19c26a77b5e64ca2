import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../src/cli/args.ts';
import { BACKGROUND_NICE, runsInBackground } from '../../src/cli/background-priority.ts';
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

/** --backup and --dump run at nice 19, every thread of them; the daemon and the other commands keep their priority. */

/** the nice value of each thread of a process, by thread name (field 19 of /proc/PID/task/TID/stat) */
function threadNices(pid: number): { name: string; nice: number }[] {
  const out = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // the name is in parentheses and may hold spaces ("Bun Pool 0"): fields are counted after its `)`
      out.push({
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]),
      });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

test('the raw-argument check agrees with parseArgs on which commands run in the background', () => {
  const argvs = [
    [],
    ['serve'],
    ['--config', 'x.toml'],
    ['--config=x.toml'],
    ['--check-config'],
    ['--help'],
    ['-h'],
    ['--version'],
    ['--dump'],
    ['--dump', '--history'],
    ['--dump', '--platform', 'acme'],
    ['--dump', '--doi=10.1/x'],
    ['--env', 'staging', '--dump'],
    ['--backup', '/b'],
    ['--backup=/b'],
    ['--backup', '/b', '--env', 'staging'],
    ['--config=c.toml', '--backup=/tmp/--dump'],
    ['--validate', 'f'],
    ['--ingest', 'f'],
    ['--import-updates', 's'],
    ['--harvest'],
    ['--harvest', '--full'],
    ['--failures'],
    ['--retry', 'k'],
    ['--report', 'k'],
    ['--stats'],
    ['--config=--dump'],
    ['--platform=--backup', '--stats'],
  ];
  for (const argv of argvs) {
    const parsed = parseArgs(argv);
    if ('code' in parsed) throw new Error(`${JSON.stringify(argv)} should parse: ${parsed.message}`);
    expect({ argv, background: runsInBackground(argv) }).toEqual({
      argv,
      background: ['backup', 'dump'].includes(parsed.command.kind),
    });
  }
});

test('lowerOwnPriority: every thread now, and threads started after it (a worker, the HTTP client), at nice 19', async () => {
  const script = `
    import { lowerOwnPriority } from ${JSON.stringify(join(REPO, 'src/cli/background-priority.ts'))};
    lowerOwnPriority();
    await fetch('http://127.0.0.1:9/').catch(() => {});
    const w = new Worker(URL.createObjectURL(new Blob(['postMessage(1)'])));
    await new Promise((r) => (w.onmessage = r));
    process.stdout.write('ready\\n');
    await new Promise(() => {});
  `;
  const proc = Bun.spawn([BUN, '-e', script], { stdout: 'pipe', stderr: 'inherit' });
  try {
    const reader = proc.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('ready\n');
    const threads = threadNices(proc.pid);
    expect(threads.map((t) => t.name)).toContain('HTTP Client');
    expect(threads.length).toBeGreaterThan(4);
    expect(threads.filter((t) => t.nice !== BACKGROUND_NICE)).toEqual([]);
  } finally {
    proc.kill('SIGKILL');
    await proc.exited;
  }
});

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
beforeEach(() => {
  dir = tempDir('doi-holdings-priority-');
  cfg = writeConfig(dir.path);
});
afterEach(() => dir.remove());

test('--dump beside the daemon: the dump runs at nice 19 while it writes, the daemon at the priority it was started with', async () => {
  const records = Array.from({ length: 4_000 }, (_, i) => ({ doi: `10.5555/priority-${i}`, accessType: 'open' }));
  const file = join(cfg.bucket, writeDeposit(cfg.bucket, 'acme', records));
  expect((await runCli(['--ingest', '--config', cfg.path, file])).code).toBe(0);
  const daemon = startDaemon(cfg.path);
  try {
    await waitForLog(daemon, 'daemon.started');
    // its output is not read until the threads are looked at: a dump larger than the pipe waits on it meanwhile
    const dump = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--dump', '--config', cfg.path], {
      cwd: REPO,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = dump.stdout.getReader();
    const first = await reader.read(); // it has loaded and started writing
    expect(first.done).toBe(false);
    const threads = threadNices(dump.pid);
    expect(dump.exitCode).toBeNull(); // looked at while it ran
    expect(threads.length).toBeGreaterThan(2);
    expect(threads.filter((t) => t.nice !== BACKGROUND_NICE)).toEqual([]);
    const own = getPriority();
    expect(own).not.toBe(BACKGROUND_NICE);
    expect(threadNices(daemon.pid).filter((t) => t.nice !== own)).toEqual([]);

    let bytes = first.value!.length;
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
    expect(await dump.exited).toBe(0);
    expect(bytes).toBeGreaterThan(4_000 * 40); // all of it came, once read
  } finally {
    await daemon.stop();
  }
});
