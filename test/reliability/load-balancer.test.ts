import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianLibraries, extractDebianPackage, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import {
  REPO,
  setServer,
  startDaemon,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';
import { logLines } from '../support/harvest-support.ts';

/**
 * A replica restarted behind a load balancer loses no request (docs/operations.md, "Load balancing and restarts"):
 * two daemons on one bucket, each with its own store, behind HAProxy configured as the docs show it, its checks on
 * /readyz. A steady load of status-page and Entitlement API requests goes through HAProxy while one replica is
 * stopped (SIGTERM, waited for) and started again on its port; every request must be answered 200 with the right
 * body, and both replicas must have served. HAProxy's retries are turned off (`retries 0`), so that a request sent
 * to a closed port would fail: the daemon's drain alone must make it zero. HAProxy comes from Debian's package,
 * unpacked into .cache/debian (installing it would start a service), its libraries installed where missing.
 */

const DOI = '10.5555/balanced.1';
const VOR = [{ url: 'https://acme.example/balanced.pdf', contentType: 'application/pdf' }];
/** concurrent clients of the load */
const CLIENTS = 4;

const dir = tempDir('doi-holdings-lb-');
let haproxy: ReturnType<typeof Bun.spawn> | undefined;
let haproxyLog = '';
let front: string;
const replicas: { name: string; config: string; url: string; daemon: ReturnType<typeof startDaemon> }[] = [];

/** A TCP port free on 127.0.0.1 at this moment (the OS picks it; it is let go for the one that takes it). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/**
 * The HAProxy configuration of docs/operations.md (its ```haproxy block) with this test's addresses: the frontend on
 * `frontPort`, the two replicas, and `retries 0` after the documented retries (the later setting wins).
 */
function haproxyConfig(frontPort: number): string {
  const doc = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
  const block = /^```haproxy\n([\s\S]*?)^```$/m.exec(doc)?.[1];
  if (!block) throw new Error('no ```haproxy block in docs/operations.md');
  const servers = replicas.map((r) => `    server ${r.name} ${new URL(r.url).host} check`);
  const lines = block.split('\n');
  const first = lines.findIndex((l) => /^\s*server /.test(l));
  if (first === -1 || !lines.some((l) => /^\s*bind /.test(l))) throw new Error(`no bind or server lines in:\n${block}`);
  return `${lines
    .filter((l, i) => i === first || !/^\s*server /.test(l))
    .map((l, i) => (i === first ? ['    retries 0', ...servers].join('\n') : l))
    .map((l) => l.replace(/^(\s*)bind .*$/, `$1bind 127.0.0.1:${frontPort}`))
    .join('\n')}\n`;
}

beforeAll(async () => {
  const root = extractDebianPackage('haproxy');
  ensureDebianLibraries('haproxy');
  const binary = join(root, 'usr/sbin/haproxy');
  const bucket = join(dir.path, 'bucket');
  writeDeposit(bucket, 'acme', [{ doi: DOI, accessType: 'open', vor: VOR }], { mtime: 1_700_000_000 });
  for (const name of ['replica-1', 'replica-2']) {
    mkdirSync(join(dir.path, name));
    const cfg = writeConfig(join(dir.path, name));
    // the one bucket folder, watched by both; each its own store under its own folder
    writeFileSync(
      cfg.path,
      readFileSync(cfg.path, 'utf8').replace('path = "bucket"', `path = ${JSON.stringify(bucket)}`),
    );
    // a fixed port: the replica is started again on it
    setServer(cfg, { listen: `127.0.0.1:${freePort()}` });
    const daemon = startDaemon(cfg.path);
    await waitForLog(daemon, '"daemon.started"');
    const url = String(logLines(daemon).find((l) => l.event === 'daemon.started')?.url).replace(/\/$/, '');
    replicas.push({ name, config: cfg.path, url, daemon });
  }
  for (const r of replicas) await waitForLog(r.daemon, '"file.applied"');

  const frontPort = freePort();
  front = `http://127.0.0.1:${frontPort}`;
  const config = join(dir.path, 'haproxy.cfg');
  writeFileSync(config, haproxyConfig(frontPort));
  const check = Bun.spawnSync([binary, '-c', '-f', config]);
  if (check.exitCode !== 0)
    throw new Error(`haproxy -c refused the config:\n${check.stdout}${check.stderr}\n${readFileSync(config, 'utf8')}`);
  // -db: in the foreground, not as a daemon
  const proc = Bun.spawn([binary, '-db', '-f', config], { stdout: 'pipe', stderr: 'pipe' });
  haproxy = proc;
  for (const stream of [proc.stdout, proc.stderr])
    void (async () => {
      for await (const chunk of stream) haproxyLog += new TextDecoder().decode(chunk);
    })();
  await waitFor(async () => {
    if (proc.exitCode !== null) throw new Error(`haproxy exited (${proc.exitCode}):\n${haproxyLog}`);
    return (await fetch(`${front}/livez`).catch(() => undefined))?.status === 200;
  }, 'haproxy answering');
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  haproxy?.kill('SIGTERM');
  await haproxy?.exited;
  for (const r of replicas) await r.daemon.stop();
  dir.remove();
});

/** What the load saw: every request, and those not answered 200 with the expected body. */
interface Seen {
  requests: number;
  failures: string[];
}

/** One request through the proxy, alternating the status page (JSON) and the Entitlement API; a failure is said. */
async function ask(i: number): Promise<string | undefined> {
  try {
    if (i % 2 === 0) {
      const r = await fetch(`${front}/doi/${DOI}?format=json`, { signal: AbortSignal.timeout(10_000) });
      const body = await r.text();
      return r.status === 200 && body.includes(DOI) ? undefined : `status page: ${r.status} ${body.slice(0, 200)}`;
    }
    const r = await fetch(`${front}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
      body: JSON.stringify({ dois: [DOI] }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = await r.text();
    return r.status === 200 && body.includes('"entitled":"yes"') ? undefined : `entitlements: ${r.status} ${body}`;
  } catch (e) {
    return `${i % 2 === 0 ? 'status page' : 'entitlements'}: ${(e as Error).message}`;
  }
}

/** The requests a replica has answered 200 on the two routes of the load, from its /metrics. */
async function served(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const route of ['/doi/{doi}', '/v2.2/entitlements'])
    n += Number(
      new RegExp(`^doi_holdings_http_requests_total\\{route="${route}",status="200"\\} (\\d+)$`, 'm').exec(text)?.[1] ??
        0,
    );
  return n;
}

test('a replica stopped and started again under load behind HAProxy: no request fails, both replicas serve', async () => {
  const seen: Seen = { requests: 0, failures: [] };
  let running = true;
  const load = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = client; running; i++) {
      const failure = await ask(i);
      seen.requests++;
      if (failure) seen.failures.push(failure);
    }
  });
  try {
    const [one, two] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    // both take requests before the restart: HAProxy has both up
    await waitFor(
      async () => (await served(one.url)) > 0 && (await served(two.url)) > 0,
      'both replicas serving',
      30_000,
    );

    one.daemon.signal('SIGTERM');
    const stoppedAt = seen.requests;
    expect(await one.daemon.exited).toBe(0);
    // it drained: its /readyz had been asked by HAProxy's checks
    expect(logLines(one.daemon).find((l) => l.event === 'daemon.draining')).toMatchObject({ seconds: 5 });
    const whileDown = seen.requests - stoppedAt;

    one.daemon = startDaemon(one.config);
    await waitForLog(one.daemon, '"daemon.started"');
    // HAProxy takes it back after its `rise` good checks: the restarted process serves requests of the load
    await waitFor(async () => (await served(one.url)) > 0, 'the restarted replica serving again', 30_000);
    running = false;
    await Promise.all(load);

    expect(seen.failures).toEqual([]);
    // the load went on through the stop, so requests met the draining and the stopped replica's turn
    expect(whileDown).toBeGreaterThan(0);
    expect(await served(two.url)).toBeGreaterThan(0);
  } finally {
    running = false;
    await Promise.all(load);
  }
}, 120_000);
