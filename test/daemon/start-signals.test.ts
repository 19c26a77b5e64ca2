import { afterEach, beforeEach, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DaemonSignal, StartSignals } from '../../src/daemon/start-signals.ts';
import {
  dump,
  startDaemon,
  type TestConfig,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';

/**
 * Signals during start-up (`systemctl reload` or `stop` just after `start`): the daemon process catches them from
 * its first line, not only once its program is loaded (about 0.3 s): a SIGHUP then would have ended it (exit 129,
 * which systemd takes as a clean exit: the service stayed down).
 */

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let daemon: ReturnType<typeof startDaemon> | undefined;

beforeEach(() => {
  dir = tempDir('doi-holdings-start-signals-');
  cfg = writeConfig(dir.path);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  dir.remove();
});

/**
 * Sends `signal` at the first instant the process catches SIGHUP (its `SigCgt` mask in /proc): the earliest a
 * signal can be survived. The program has not loaded by then when the handler is the first line's.
 */
function signalAtFirstHandler(pid: number, signal: NodeJS.Signals): void {
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    let mask: string | undefined;
    try {
      mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    } catch {
      return; // the process is gone: the caller sees how it ended
    }
    if (mask && (BigInt(`0x${mask}`) & 1n) === 1n) {
      process.kill(pid, signal);
      return;
    }
  }
  throw new Error('the daemon never caught SIGHUP');
}

const events = (log: string, event: string) =>
  log
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('a SIGHUP as soon as the process starts is held: the daemon starts, answers /healthz, and reloads once', async () => {
  daemon = startDaemon(cfg.path);
  signalAtFirstHandler(daemon.pid, 'SIGHUP');
  const ended = daemon.exited.then((code) => `exited ${code}`);
  expect(await Promise.race([ended, waitForLog(daemon, 'config.reloaded').then(() => 'reloaded')])).toBe('reloaded');
  const log = daemon.log();
  expect(events(log, 'daemon.signal')).toEqual([
    expect.objectContaining({ signal: 'SIGHUP', message: expect.stringContaining('came while the program loaded') }),
  ]);
  // the reload ran once start had ended
  expect(log.indexOf('"event":"daemon.started"')).toBeLessThan(log.indexOf('"event":"config.reloaded"'));
  const url = events(log, 'daemon.started')[0]!.url as string;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  // and it goes on working
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/after.hup', accessType: 'open' }]);
  await waitFor(async () => (await dump(cfg.path)).length === 1, 'the deposit applied');
  expect(await daemon.stop()).toBe(0);
});

test('a SIGTERM as soon as the process starts stops it cleanly before anything is opened', async () => {
  daemon = startDaemon(cfg.path);
  signalAtFirstHandler(daemon.pid, 'SIGTERM');
  expect(await daemon.exited).toBe(0);
  const log = daemon.log();
  expect(events(log, 'daemon.signal')).toEqual([
    expect.objectContaining({ signal: 'SIGTERM', message: expect.stringContaining('stopping before start') }),
  ]);
  expect(events(log, 'daemon.stopped')).toHaveLength(1);
  expect(events(log, 'daemon.started')).toHaveLength(0);
  expect(existsSync(join(cfg.store, 'production'))).toBe(false);
  daemon = undefined;
});

test('a SIGTERM while the daemon starts (its stores open) stops it cleanly, and the store opens again', async () => {
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/before.term', accessType: 'open' }]);
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'watch.started');
  daemon.signal('SIGTERM');
  expect(await daemon.exited).toBe(0);
  expect(events(daemon.log(), 'daemon.stopped')).toHaveLength(1);
  daemon = startDaemon(cfg.path);
  await waitFor(async () => (await dump(cfg.path)).length === 1, 'the deposit applied after the restart');
});

test('another command held no signal back: one that came while it loaded takes its default action', async () => {
  const sent: DaemonSignal[] = [];
  const listeners = new Map<DaemonSignal, () => void>();
  const target = {
    pid: 42,
    on: (s: DaemonSignal, l: () => void) => listeners.set(s, l),
    off: (s: DaemonSignal) => listeners.delete(s),
    kill: (_pid: number, s: DaemonSignal) => sent.push(s),
  };
  const held = new StartSignals(target);
  listeners.get('SIGHUP')!();
  listeners.get('SIGHUP')!();
  await held.release();
  expect(listeners.size).toBe(0);
  expect(sent).toEqual(['SIGHUP']);
});
