import { afterAll, afterEach, expect, test } from 'bun:test';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { ensureDebianTool } from '../support/debian.ts';
import { BUN, REPO, setServer, startDaemon, tempDir, waitFor, waitForLog, writeConfig } from '../support/fixtures.ts';
import { daemonUrl, logLines } from '../support/harvest-support.ts';

/**
 * The probes of a running daemon (docs/operations.md, "Scaling out"): /livez, /readyz, /healthz with the version;
 * doi_holdings_build_info with the checkout's commit; a stop that drains (/readyz 503 while requests are still
 * served, then the port closes) once /readyz was asked, and closes at once when it never was.
 */

const dir = tempDir('doi-holdings-probes-');
const daemons: { stop(): Promise<number> }[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
});
afterAll(() => dir.remove());

const updates = (base: string) =>
  fetch(`${base}/v2.2/updates`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: '{"dois":["10.5555/probe.1"]}',
  });

function start(name: string, server: Record<string, string | number> = {}): ReturnType<typeof startDaemon> {
  mkdirSync(join(dir.path, name));
  const cfg = writeConfig(join(dir.path, name));
  setServer(cfg, server);
  const d = startDaemon(cfg.path);
  daemons.push(d);
  return d;
}

/** The checkout's commit, as git gives it. */
function headCommit(): string {
  const git = Bun.spawnSync([ensureDebianTool('git', 'git'), '-C', REPO, 'rev-parse', '--short', 'HEAD']);
  if (git.exitCode !== 0) throw new Error(`git rev-parse failed: ${git.stderr.toString()}`);
  return git.stdout.toString().trim();
}

test("/livez and /readyz are 200, /healthz gives the version, /metrics the build's version and the checkout's commit", async () => {
  const d = start('running');
  const base = await daemonUrl(d);
  const commit = headCommit();
  expect(commit).toMatch(/^[0-9a-f]{4,}$/);
  const live = await fetch(`${base}/livez`);
  expect([live.status, await live.json()]).toEqual([200, { status: 'live' }]);
  const ready = await fetch(`${base}/readyz`);
  expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
  const health = await fetch(`${base}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok', version: pkg.version });
  const metrics = await (await fetch(`${base}/metrics`)).text();
  expect(metrics).toContain('# TYPE doi_holdings_build_info gauge\n');
  expect(metrics).toContain(`doi_holdings_build_info{version="${pkg.version}",commit="${commit}"} 1\n`);
  expect(logLines(d).find((l) => l.event === 'daemon.started')).toMatchObject({ version: pkg.version, commit });
});

test('sources without a .git of their own: the commit is "unknown", and the daemon starts all the same', async () => {
  const copy = join(dir.path, 'copy');
  for (const part of ['src', 'conf', 'package.json']) cpSync(join(REPO, part), join(copy, part), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
  mkdirSync(join(dir.path, 'copy-daemon'));
  const cfg = writeConfig(join(dir.path, 'copy-daemon'));
  const proc = Bun.spawn([BUN, join(copy, 'src/main.ts'), '--config', cfg.path], {
    cwd: copy,
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let log = '';
  void (async () => {
    for await (const chunk of proc.stderr) log += new TextDecoder().decode(chunk);
  })();
  daemons.push({ stop: () => (proc.kill('SIGTERM'), proc.exited) });
  await waitForLog({ log: () => log }, '"daemon.started"');
  const base = /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(log)![1]!;
  const metrics = await (await fetch(`${base}/metrics`)).text();
  expect(metrics).toContain(`doi_holdings_build_info{version="${pkg.version}",commit="unknown"} 1\n`);
});

test('a stop after /readyz was asked drains: /readyz 503 naming why while requests are still answered, then the port closes', async () => {
  // a drain far longer than the few requests below take: they all fall inside it
  const d = start('draining', { drainSeconds: 10 });
  const base = await daemonUrl(d);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  d.signal('SIGTERM');
  await waitForLog(d, '"daemon.draining"');
  const notReady = await fetch(`${base}/readyz`);
  expect([notReady.status, await notReady.json()]).toEqual([
    503,
    { status: 'not ready', failed: ['daemon: shutting down'] },
  ]);
  expect((await fetch(`${base}/livez`)).status).toBe(200);
  expect((await fetch(`${base}/healthz`)).status).toBe(503);
  const answered = await updates(base);
  expect(answered.status).toBe(200);
  expect(await answered.json()).toEqual({ documents: [{ doi: '10.5555/probe.1', statusCode: 200, updates: [] }] });
  expect(logLines(d).find((l) => l.event === 'daemon.draining')).toMatchObject({ seconds: 10 });
  await waitForLog(d, '"daemon.stopped"', 30_000);
  // a /readyz 503 is the probe's answer, not a server error
  expect(logLines(d).filter((l) => l.event === 'http.server_error')).toEqual([]);
  await waitFor(
    async () => (await fetch(`${base}/livez`).catch((e: Error) => e)) instanceof Error,
    'the port to close after the drain',
  );
});

test('a stop when /readyz was never asked closes at once: no drain', async () => {
  const d = start('not-probed', { drainSeconds: 10 });
  const base = await daemonUrl(d);
  const health = await fetch(`${base}/healthz`);
  expect([health.status, await health.json()]).toMatchObject([200, { status: 'ok' }]);
  const code = await d.stop();
  daemons.splice(daemons.indexOf(d), 1);
  const lines = logLines(d);
  const events = lines.map((l) => l.event);
  // one comparison, so that a failure shows the exit code and what the daemon logged beside it
  expect({
    code,
    stopped: events.includes('daemon.stopped'),
    drained: events.includes('daemon.draining'),
    errors: lines.filter((l) => l.level === 'error'),
  }).toEqual({ code: 0, stopped: true, drained: false, errors: [] });
});
