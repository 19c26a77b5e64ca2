import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { doiKey } from '../../src/doi/index.ts';
import { DELIVERY_CHILD_ARG } from '../../src/webhooks/index.ts';
import { startDaemon, tempDir, waitFor, writeConfig } from '../support/fixtures.ts';
import { type Daemon, daemonUrl, logLines } from '../support/harvest-support.ts';
import { csv, ROWS } from '../support/rw-sample.ts';
import { receiver } from '../support/webhook-receiver.ts';

/**
 * The daemon as a real process, with its delivery process (this program again, started by the daemon), killed
 * with SIGKILL while a delivery is in flight (the receiver holds its answer): after a restart every event of the
 * change feed reaches the receiver at least once, first seen in feed order, every signature verified by the
 * `standardwebhooks` package.
 */

const KEY = 'test-key-123';
let dir: ReturnType<typeof tempDir>;
let drop: string;
let configPath: string;
let daemon: Daemon | undefined;
/** the request to hold unanswered; the test kills a process while it is held */
const HOLD_AT = 5;
/** a receiver that holds its HOLD_AT-th request until `release()` */
function holdingReceiver() {
  const secrets: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let holding!: () => void;
  const held = new Promise<void>((r) => {
    holding = r;
  });
  const hook = receiver({
    secrets: () => secrets,
    answer: (n) => {
      if (n !== HOLD_AT) return 204;
      holding();
      return released.then(() => new Response(null, { status: 204 }));
    },
  });
  return { hook, secrets, held, release };
}
let receiving: ReturnType<typeof holdingReceiver>;

beforeEach(() => {
  receiving = holdingReceiver();
  dir = tempDir('webhooks-crash');
  drop = join(dir.path, 'drop');
  mkdirSync(drop);
  // the delivery process at the daemon's priority: under SCHED_IDLE (the default) a machine whose CPU other
  // processes keep busy gives it none, and these tests are about what a kill loses, not about priority
  configPath = writeConfig(
    dir.path,
    `[updates]\ndropDir = "${drop}"\n\n[webhooks]\nenabled = true\npath = "webhooks"\nallowHttp = true\nallowPrivateTargets = true\npollMs = 20\nretryBaseMs = 10\nretryMaxMs = 50\ntimeoutMs = 5000\nnice = 0\nidle = false\n`,
  ).path;
});
afterEach(async () => {
  receiving.release();
  await daemon?.stop();
  daemon = undefined;
  receiving.hook.stop();
  dir.remove();
});

/** The delivery processes whose parent is `pid` (their command line ends in DELIVERY_CHILD_ARG). */
function deliveryProcesses(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (ppid === pid && cmdline.includes(DELIVERY_CHILD_ARG)) found.push(Number(name));
    } catch {
      // ended while read
    }
  }
  return found;
}

async function dropFile(d: Daemon, name: string, text: string): Promise<void> {
  writeFileSync(join(drop, `.${name}.partial`), text);
  renameSync(join(drop, `.${name}.partial`), join(drop, name));
  // this file's own line: a restarted daemon may log the files it finds in the folder too
  await waitFor(
    () => logLines(d).some((l) => l.event === 'updates.imported' && String(l.source).endsWith(name)),
    `the import of ${name}`,
    30_000,
  );
}

async function api(base: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${base}/v2.2/subscriptions${path}`, {
    method,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  type View = { id: string; secret: string; pending: number; deliveredThrough: number };
  return { status: r.status, body: (await r.json()) as View };
}

/**
 * Drops a file whose import makes 40 events, lets `kill` kill what it kills while the 6th delivery is held, then
 * (with the daemon running again, or still) a second file; checks every event was delivered in order, the held one
 * at least twice.
 */
async function killedDuringDeliveries(kill: (d: Daemon) => Promise<Daemon>): Promise<void> {
  const { hook, secrets, held, release } = receiving;
  daemon = startDaemon(configPath);
  let base = await daemonUrl(daemon);
  const made = await api(base, 'POST', '', { url: hook.url, watch: 'everything' });
  expect(made.status).toBe(201);
  secrets.push(made.body.secret);
  const id = made.body.id as string;
  await dropFile(daemon, 'rw-1.csv', csv(ROWS.slice(0, 40)));
  await held; // the 6th delivery is in flight: its answer never reaches the process that sent it
  daemon = await kill(daemon);
  release();
  base = await daemonUrl(daemon);
  await dropFile(daemon, 'rw-2.csv', csv(ROWS.slice(0, 80)));
  // the import's log line can come before the webhooks' next poll of the feed: nothing pending is not enough, the
  // feed's last change must have been delivered too
  const feedDois = async () => {
    const feed = await fetch(`${base}/v2.2/updates/changes`, { headers: { 'x-api-key': KEY } });
    return ((await feed.json()) as { changes: { doi: string }[] }).changes.map((c) => doiKey(c.doi));
  };
  const done = await waitFor(
    async () => {
      const v = await api(base, 'GET', `/${id}`);
      const seen = new Set(hook.received.map((r) => doiKey(r.body.doi)));
      const all = (await feedDois()).every((d) => seen.has(d));
      return all && v.body.pending === 0 && v.body.deliveredThrough > 0 && v.body;
    },
    'every event delivered',
    60_000,
  );
  const events = hook.received.map((r) => Number(r.id.split('_').at(-1)));
  const firsts = events.filter((e, i) => events.indexOf(e) === i);
  // every event from the first to the last, first seen in order; the one in flight at the kill came again
  expect(firsts).toEqual(Array.from({ length: done.deliveredThrough }, (_, i) => i + 1));
  expect(events.filter((e) => e === events[HOLD_AT]).length).toBeGreaterThanOrEqual(2);
  expect(hook.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
  // every work of the change feed was delivered with the list the feed holds now (its last delivery)
  const feed = await fetch(`${base}/v2.2/updates/changes`, { headers: { 'x-api-key': KEY } });
  const { changes } = (await feed.json()) as { changes: { doi: string; updates: { updateType: string }[] }[] };
  const last = new Map(hook.received.map((r) => [doiKey(r.body.doi), r.body.updates]));
  expect(changes.length).toBeGreaterThan(40);
  for (const c of changes) expect([c.doi, last.get(doiKey(c.doi))]).toEqual([c.doi, c.updates]);
}

test('a SIGKILL of the daemon and its delivery process loses nothing: every event delivered, in order', async () => {
  await killedDuringDeliveries(async (d) => {
    const [child] = deliveryProcesses(d.pid);
    expect(child).toBeNumber();
    // as systemd ends the unit's processes when its main one dies: the delivery process first, then the daemon
    process.kill(child!, 'SIGKILL');
    d.signal('SIGKILL');
    await d.exited;
    // changes made while it was down are taken from the feed after the restart, like the rest
    return startDaemon(configPath);
  });
}, 120_000);

test('a delivery process killed alone is started again by the daemon, and delivers what it had in flight', async () => {
  await killedDuringDeliveries(async (d) => {
    const [child] = deliveryProcesses(d.pid);
    process.kill(child!, 'SIGKILL');
    await waitFor(
      () => logLines(d).some((l) => l.event === 'webhooks.failed' && /delivery process .* ended/.test(String(l.error))),
      'the daemon says its delivery process ended',
    );
    await waitFor(() => {
      const now = deliveryProcesses(d.pid);
      return now.length === 1 && now[0] !== child;
    }, 'a new delivery process');
    return d;
  });
}, 120_000);

test('a delivery process left by a killed daemon is ended by the next one, which delivers alone', async () => {
  daemon = startDaemon(configPath);
  await daemonUrl(daemon);
  const [left] = deliveryProcesses(daemon.pid);
  expect(left).toBeNumber();
  daemon.signal('SIGKILL'); // its delivery process stays while it has deliveries in flight (here none: it ends)
  await daemon.exited;
  daemon = startDaemon(configPath);
  await daemonUrl(daemon);
  await waitFor(() => deliveryProcesses(daemon!.pid).length === 1, 'the new delivery process');
  await waitFor(() => {
    try {
      return !readFileSync(`/proc/${left}/cmdline`, 'utf8').includes(DELIVERY_CHILD_ARG);
    } catch {
      return true;
    }
  }, 'the old delivery process gone');
}, 60_000);
