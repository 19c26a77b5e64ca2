import { afterAll, afterEach, expect, test } from 'bun:test';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUN, REPO, tempDir, waitFor, writeConfig } from '../support/fixtures.ts';

/**
 * Log lines under systemd (docs/operations.md, "Logs"): with JOURNAL_STREAM naming the daemon's stderr, as systemd
 * sets it for a service whose output is the journal, each line starts with its sd-daemon priority (`<3>` error,
 * `<4>` warn, `<6>` info), which the journal files it under (`journalctl -p warning`). Unset, or naming another
 * stream (inherited by a program whose stderr is elsewhere), the lines are plain JSON. The daemon's stderr is a file
 * here, so that its device and inode are known before it starts, as systemd knows its socket's.
 */

const dir = tempDir('doi-holdings-journal-');
const running: ReturnType<typeof Bun.spawn>[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill('SIGTERM');
    await p.exited;
  }
});
afterAll(() => dir.remove());

const PRIORITY: Record<string, string> = { error: '3', warn: '4', info: '6', debug: '7' };

/**
 * The daemon with its stdout and stderr on a file; JOURNAL_STREAM is that file's `dev:ino` ('stderr'), another
 * file's ('elsewhere'), or unset, whatever the test runner's own environment holds.
 */
function start(name: string, journal: 'stderr' | 'elsewhere' | 'unset') {
  const home = join(dir.path, name);
  mkdirSync(home);
  const cfg = writeConfig(home);
  const logPath = join(home, 'stderr.log');
  const fd = openSync(logPath, 'w');
  const own = fstatSync(fd, { bigint: true });
  const other = statSync(cfg.path, { bigint: true });
  const stream = { stderr: `${own.dev}:${own.ino}`, elsewhere: `${other.dev}:${other.ino}`, unset: undefined }[journal];
  const { JOURNAL_STREAM: _inherited, ...env } = process.env;
  const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--config', cfg.path], {
    cwd: REPO,
    env: stream === undefined ? env : { ...env, JOURNAL_STREAM: stream },
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  running.push(proc);
  const log = () => readFileSync(logPath, 'utf8');
  return { proc, cfg, log, waitFor: (needle: string) => waitFor(() => log().includes(needle), needle) };
}

test('JOURNAL_STREAM naming stderr: each line starts with its priority, <3> error, <4> warn, <6> info', async () => {
  const d = start('journal', 'stderr');
  await d.waitFor('"daemon.started"');
  // a reload with a setting that needs a restart (warn), then one with a config refused (error)
  const text = readFileSync(d.cfg.path, 'utf8');
  writeFileSync(d.cfg.path, text.replace('listen = "127.0.0.1:0"', 'listen = "127.0.0.1:1"'));
  d.proc.kill('SIGHUP');
  await d.waitFor('"config.reloaded"');
  writeFileSync(d.cfg.path, `nonsense = 1\n${text}`);
  d.proc.kill('SIGHUP');
  await d.waitFor('"config.reload_refused"');
  d.proc.kill('SIGTERM');
  expect(await d.proc.exited).toBe(0);

  const lines = d
    .log()
    .split('\n')
    .filter((l) => l !== '');
  const parsed = lines.map((line) => {
    const [, priority, json] = /^<(\d)>(\{.*\})$/.exec(line) ?? [];
    if (!json) throw new Error(`a line without a priority: ${line}`);
    const { level, event } = JSON.parse(json) as { level: string; event: string };
    return { priority, level, event };
  });
  for (const p of parsed) expect([p.event, p.priority]).toEqual([p.event, PRIORITY[p.level]]);
  const byEvent = Object.fromEntries(parsed.map((p) => [p.event, p.priority]));
  expect(byEvent).toMatchObject({
    'daemon.started': '6',
    'config.restart_needed': '4',
    'config.reload_refused': '3',
    'daemon.stopped': '6',
  });
});

for (const journal of ['unset', 'elsewhere'] as const)
  test(`JOURNAL_STREAM ${journal === 'unset' ? 'unset' : 'naming another stream than stderr'}: plain JSON lines`, async () => {
    const d = start(journal, journal);
    await d.waitFor('"daemon.started"');
    d.proc.kill('SIGTERM');
    expect(await d.proc.exited).toBe(0);
    const lines = d
      .log()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line[0]).toBe('{');
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toContain('daemon.stopped');
  });
