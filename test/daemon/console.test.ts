import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { jsonLogger } from '../../src/base/log.ts';
import { loadConfig } from '../../src/config/index.ts';
import { Daemon } from '../../src/daemon/daemon.ts';
import { tempDir, waitFor, writeConfig, writeDeposit } from '../support/fixtures.ts';
import { SAMPLE_PATH } from '../support/rw-sample.ts';

/**
 * The operator console of the running daemon (docs/operations.md, "Operator console"): on its own listener
 * (`server.adminListen`) and never on the public one; on the public one only with its key (`server.adminKeyEnv`).
 * The update sources' row comes from the sources the daemon follows.
 */

const CONSOLE_KEY = 'console-key-0123456789abcdef';
let dir: ReturnType<typeof tempDir>;
let daemon: Daemon | undefined;
let feeds: ReturnType<typeof Bun.serve>;
const logged: Record<string, unknown>[] = [];

beforeEach(() => {
  dir = tempDir('doi-holdings-console-daemon-');
  logged.length = 0;
  feeds = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(readFileSync(SAMPLE_PATH)) });
});
afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  feeds.stop(true);
  dir.remove();
});

const feedUrl = () => `http://127.0.0.1:${feeds.port}/rw.csv`;

/** A test config with `server` lines added and a Retraction Watch URL followed; `notGzip`: a file to quarantine too. */
function config(serverLines: string, notGzip = false): string {
  const cfg = writeConfig(
    dir.path,
    `\n[updates]\nurls = [{ url = "${feedUrl()}", format = "retraction-watch-csv", everyMinutes = 60 }]\n`,
  );
  const text = readFileSync(cfg.path, 'utf8').replace(
    'listen = "127.0.0.1:0"\n',
    `listen = "127.0.0.1:0"\n${serverLines}\n`,
  );
  writeFileSync(cfg.path, text);
  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/console-1', accessType: 'open' }]);
  if (notGzip) writeDeposit(cfg.bucket, 'acme', [], { bytes: Buffer.from('not gzip') });
  return cfg.path;
}

async function started(path: string, env: Record<string, string> = {}): Promise<Daemon> {
  daemon = new Daemon(
    loadConfig(path, env),
    jsonLogger((l) => logged.push(JSON.parse(l))),
    'test-version',
  );
  await daemon.start();
  await waitFor(() => logged.some((l) => l.event === 'file.applied'), 'the deposit applied');
  await daemon.updateSources!.idle();
  return daemon;
}

test("adminListen: the console on the operator's listener, with the daemon's update sources; not on the public one", async () => {
  const d = await started(config('adminListen = "127.0.0.1:0"', true));
  await waitFor(() => logged.some((l) => l.event === 'file.quarantined'), 'the file that is not gzip quarantined');
  expect(d.adminUrl).toBeDefined();
  expect(d.adminUrl).not.toBe(d.url);
  expect(logged.find((l) => l.event === 'daemon.console_listening')).toMatchObject({
    url: `${d.adminUrl}/console`,
    key: false,
  });
  const r = await fetch(`${d.adminUrl}/console`);
  expect(r.status).toBe(200);
  const text = await r.text();
  expect(text).toContain('doi-holdings test-version');
  // holdings, then per access type: paid, open, free, permFree, none
  expect(text).toContain(
    '<td>acme</td><td class="n">1</td><td class="n">0</td><td class="n">1</td><td class="n">0</td><td class="n">0</td><td class="n">0</td>',
  );
  const sources = text.slice(text.indexOf('<h2 id="sources">'), text.indexOf('<h2 id="platforms">'));
  expect(sources).toContain(`<code>${feedUrl()}</code>`);
  expect(sources).toContain('<span class="good">ok</span>');
  // rows of its last import, and a next run an hour after the first
  expect(sources).toMatch(/<td class="n">3,000<\/td><td><time datetime="[^"]+">/);
  expect(text).toContain(`--config ${d.config.source} --retry acme/`); // the quarantined file's retry command
  for (const path of ['/console', '/console/production']) expect((await fetch(`${d.url}${path}`)).status).toBe(404);
  expect((await fetch(`${d.adminUrl}/metrics`)).status).toBe(404);
  // the same counters in /metrics: doi_holdings_live as it was, the access types in a family of their own
  const metrics = (await (await fetch(`${d.url}/metrics`)).text()).split('\n');
  expect(metrics.filter((l) => l.startsWith('doi_holdings_live{'))).toEqual([
    'doi_holdings_live{env="production",platform="acme"} 1',
  ]);
  expect(metrics.filter((l) => l.startsWith('doi_holdings_live_by_access{'))).toEqual(
    ['paid', 'open', 'free', 'permFree', 'none'].map(
      (a) => `doi_holdings_live_by_access{env="production",platform="acme",access="${a}"} ${a === 'open' ? 1 : 0}`,
    ),
  );
});

test('adminKeyEnv without adminListen: the console on the public listener, to requests with the key only', async () => {
  const d = await started(config('adminKeyEnv = "CONSOLE_KEY"'), { CONSOLE_KEY });
  expect(d.adminUrl).toBeUndefined();
  expect((await fetch(`${d.url}/console`)).status).toBe(401);
  const r = await fetch(`${d.url}/console/production`, { headers: { authorization: `Bearer ${CONSOLE_KEY}` } });
  expect(r.status).toBe(200);
  expect(await r.text()).toContain('<h1>Production</h1>');
});

test('neither: no console anywhere', async () => {
  const d = await started(config(''));
  expect(d.adminUrl).toBeUndefined();
  const r = await fetch(`${d.url}/console`, { headers: { authorization: `Bearer ${CONSOLE_KEY}` } });
  expect(r.status).toBe(404);
});
