import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeWork, startCrossrefApi } from '../support/crossref-api.ts';
import {
  gzLines,
  runCli,
  startDaemon,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';

/**
 * The Entitlement API of the real daemon process (docs/interface.md, "Entitlement API"): deposits dropped into
 * the bucket answer at once, removals too, a paid DOI goes to the platform's loopback Entitlement API with the
 * secret from the environment, and files applied by another process (the CLI) reach the answers as well.
 */

const SECRET = 'gamma-shared-secret-0123456789abcdef';
let dir: ReturnType<typeof tempDir>;
let platform: PlatformServer;
let daemon: ReturnType<typeof startDaemon> | undefined;

beforeEach(() => {
  dir = tempDir('doi-holdings-entitlements-');
  platform = new PlatformServer(SECRET);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await platform.stop();
  dir.remove();
});

test('the daemon answers entitlements from live deposits, follows removals and CLI ingests, and asks the platform for paid DOIs', async () => {
  const cfg = writeConfig(
    dir.path,
    `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\nentitlementTimeoutMs = 2000\n`,
  );
  writeDeposit(cfg.bucket, 'acme', [
    { doi: '10.5555/Open.1', accessType: 'open', vor: [{ url: 'https://acme.example/open.pdf' }] },
  ]);
  daemon = startDaemon(cfg.path, { GAMMA_SECRET: SECRET });
  await waitForLog(daemon, 'daemon.started');
  const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
  await waitForLog(daemon, 'entitlement.index_built'); // read by a worker thread, after the port opened
  const ask = async (dois: string[]) => {
    const r = await fetch(`${url}/v2.2/entitlements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
      body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois }),
    });
    expect(r.status).toBe(200);
    return (
      (await r.json()) as { entitlements: { doi: string; statusCode: number; entitled?: string; source?: string }[] }
    ).entitlements;
  };
  await waitFor(
    async () => (await ask(['10.5555/open.1']))[0]!.source === 'oa_platform',
    'the deposit present at start to answer',
  );

  writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.6666/Paid.1', accessType: 'paid' }]);
  await waitFor(
    async () => (await ask(['10.6666/paid.1']))[0]!.source === 'service_request',
    'the paid deposit to be asked of the platform',
  );
  expect(platform.calls.at(-1)!.claims).toMatchObject({
    iss: 'doi-holdings',
    aud: 'gamma',
    sub: 'tester',
    doi: '10.6666/paid.1',
  });

  writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/open.1', deleted: true }]);
  await waitFor(async () => (await ask(['10.5555/open.1']))[0]!.statusCode === 404, 'the removal to reach the answers');

  // another process applies a file to the same store: the daemon's index notices and reads the store again
  const file = join(dir.path, 'cli', 'acme', '00000000-0000-4000-8000-00000000cafe.jsonl.gz');
  await Bun.write(file, gzLines([{ doi: '10.5555/From.Cli', accessType: 'free' }]));
  const cli = await runCli(['--ingest', file, '--config', cfg.path]);
  expect(cli.code).toBe(0);
  await waitFor(
    async () => (await ask(['10.5555/from.cli']))[0]!.source === 'oa_platform',
    'the CLI-ingested holding to answer',
  );
});

test('[entitlements.lookup] in the config file: the daemon resolves an entry by metadata at Crossref, with the Plus token from the environment, and a SIGHUP that removes the section turns it off', async () => {
  const works = JSON.parse(
    readFileSync(join(import.meta.dir, '../fixtures/crossref/lookup-works.json'), 'utf8'),
  ) as FakeWork[];
  const crossref = await startCrossrefApi({ works });
  try {
    const lookup = `\n[entitlements.lookup]\nurl = "${crossref.url}"\nmailto = "ops@example.org"\nplusTokenEnv = "CR_PLUS"\n`;
    const cfg = writeConfig(dir.path, lookup);
    writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/jmed.2021.0042', accessType: 'open' }]);
    daemon = startDaemon(cfg.path, { CR_PLUS: 'plus-secret' });
    await waitForLog(daemon, 'daemon.started');
    const url = /"url":"([^"]+)"/.exec(daemon.log())![1]!;
    await waitForLog(daemon, 'entitlement.index_built');
    const ask = async () => {
      const r = await fetch(`${url}/v2.2/entitlements`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
        body: JSON.stringify({ dois: [{ preprintDoi: '10.1101/2020.03.01.000001', uid: 'u1' }] }),
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { entitlements: Record<string, unknown>[] }).entitlements[0]!;
    };
    await waitFor(async () => (await ask()).source === 'oa_platform', 'the deposit to answer');
    expect(await ask()).toMatchObject({ doi: '10.5555/jmed.2021.0042', statusCode: 200, uid: 'u1' });
    expect(crossref.calls[0]!.headers.get('crossref-plus-api-token')).toBe('Bearer plus-secret');

    writeFileSync(cfg.path, readFileSync(cfg.path, 'utf8').replace(lookup, '\n'));
    daemon.signal('SIGHUP');
    await waitFor(async () => (await ask()).statusCode === 400, 'the reload to turn the lookup off');
  } finally {
    await crossref.stop();
  }
});
