import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { realWorks, startCrossrefApi } from '../support/crossref-api.ts';
import { ensureDebianTool } from '../support/debian.ts';
import { BUN, gzLines, REPO, tempDir, waitFor, writeConfig, writeDeposit } from '../support/fixtures.ts';

/**
 * The single executable (`make build`): lmdb's native addon and its workers (prepare, index build, store read) must be inside it,
 * and it must start itself again as the daemon's harvest process. Built
 * into a temp folder, run from another working directory, so nothing is found next to the sources.
 */
const dir = tempDir();
const exe = join(dir.path, 'doi-holdings');

beforeAll(async () => {
  const build = Bun.spawn([BUN, join(REPO, 'scripts/build.ts'), exe], { stdout: 'pipe', stderr: 'pipe' });
  const code = await build.exited;
  if (code !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
}, 120_000);
afterAll(() => dir.remove());

/** The checkout's commit, as git gives it. */
function headCommit(): string {
  const git = Bun.spawnSync([ensureDebianTool('git', 'git'), '-C', REPO, 'rev-parse', '--short', 'HEAD']);
  if (git.exitCode !== 0) throw new Error(`git rev-parse failed: ${git.stderr.toString()}`);
  return git.stdout.toString().trim();
}

test('the compiled daemon builds its entitlement index and ingests a dropped file through its workers; it answers an entitlement request from it; --dump shows it; it harvests in a process of its own', async () => {
  const api = await startCrossrefApi({ works: realWorks() });
  // an integrator without updates: its open-DOI answers take the reply's native-copy path
  const cfg = writeConfig(
    join(dir.path),
    `\n[[integrators]]\nname = "plain"\napiKey = "plain-key-123"\nupdates = false\n\n[[updates.crossref]]\nurl = "${api.url}"\nmailto = "ops@example.org"\n`,
  );
  const daemon = Bun.spawn([exe, '--config', cfg.path], { cwd: '/', stdout: 'pipe', stderr: 'pipe' });
  let log = '';
  void (async () => {
    for await (const c of daemon.stderr) log += new TextDecoder().decode(c);
  })();
  try {
    await waitFor(() => log.includes('daemon.started'), 'daemon start', 20_000);
    await waitFor(() => log.includes('entitlement.index_built'), 'the index build worker', 20_000);
    expect(log).not.toContain('entitlement.index_build_failed'); // its fallback builds on the main thread
    // the store's read worker: the Updates API's index and the prefix index, read as the daemon starts
    await waitFor(
      () => (log.match(/"event":"store\.index_read"/g) ?? []).length === 4,
      'the store read worker, 2 indexes x 2 environments',
      20_000,
    );
    expect(log).not.toContain('store.index_read_failed');
    const vor = [{ url: 'https://acme.example/pdf/1', contentType: 'application/pdf' }];
    writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/Compiled.1', accessType: 'free', vor }]);
    await waitFor(() => log.includes('file.applied'), 'file applied', 20_000);
    const url = /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(log)![1]!;
    // the commit was written in at build time: run from /, the binary has no checkout to ask
    const metrics = await (await fetch(new URL('/metrics', url))).text();
    expect(metrics).toContain(`doi_holdings_build_info{version="${pkg.version}",commit="${headCommit()}"} 1\n`);
    // libc found through bun:ffi inside the executable: the answer below is written by native copies
    if (process.platform === 'linux') expect(log).toMatch(/"event":"daemon\.started".*"nativeMemory":true/);
    const answer = await fetch(new URL('/v2.2/entitlements', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'plain-key-123' },
      body: JSON.stringify({ dois: ['10.5555/compiled.1', '10.5555/none.1'] }),
    });
    expect(await answer.text()).toBe(
      JSON.stringify({
        entitlements: [
          {
            doi: '10.5555/compiled.1',
            statusCode: 200,
            entitled: 'yes',
            accessType: 'free',
            source: 'oa_platform',
            vor,
          },
          { doi: '10.5555/none.1', statusCode: 404 },
        ],
      }),
    );
    const dump = Bun.spawnSync([exe, '--dump', '--config', cfg.path], { cwd: '/' });
    expect(dump.exitCode).toBe(0);
    const lines = dump.stdout
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      env: 'production',
      platform: 'acme',
      doi: '10.5555/Compiled.1',
      accessType: 'free',
    });
    expect(log).not.toContain('ingest.worker_failed');
    await waitFor(() => log.includes('harvest.window_committed'), 'the harvest process', 20_000);
    expect(log).not.toContain('harvest.failed');
    expect(api.calls.length).toBeGreaterThan(0);
  } finally {
    daemon.kill('SIGTERM');
    await daemon.exited;
    await api.stop();
  }
}, 60_000);

test('the compiled executable answers --version and validates a deposit', async () => {
  const version = Bun.spawnSync([exe, '--version'], { cwd: '/' });
  expect(version.exitCode).toBe(0);
  expect(version.stdout.toString()).toBe(`doi-holdings ${pkg.version} (commit ${headCommit()})\n`);
  const file = join(dir.path, 'acme', '0b1f7e2a-1111-4222-8333-944455556666.jsonl.gz');
  await Bun.write(file, gzLines([{ doi: '10.5555/ok' }, { doi: 'nope' }]));
  const validate = Bun.spawnSync([exe, '--validate', file], { cwd: '/' });
  expect(validate.exitCode).toBe(1);
  expect(validate.stdout.toString()).toContain('INVALID_DOI');
}, 60_000);

test('a stop sent to a command of the compiled executable while it loads stops it (it is not held back and lost)', async () => {
  // a Crossref that never answers: --harvest waits on it until stopped
  const silent = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => undefined) });
  try {
    mkdirSync(join(dir.path, 'signals'));
    const cfg = writeConfig(
      join(dir.path, 'signals'),
      `\n[[updates.crossref]]\nurl = "http://127.0.0.1:${silent.port}"\nmailto = "ops@example.org"\n`,
    );
    for (const afterMs of [0, 40, 80, 120, 160, 220]) {
      const harvest = Bun.spawn([exe, '--harvest', '--config', cfg.path], {
        cwd: '/',
        stdout: 'ignore',
        stderr: 'ignore',
      });
      await Bun.sleep(afterMs);
      harvest.kill('SIGTERM');
      // once --harvest runs, a stop lets its call in flight go on for 5 s (crossref-client.ts): 10 s is ample
      const ended = await Promise.race([harvest.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!ended) harvest.kill('SIGKILL');
      expect({ afterMs, ended }).toEqual({ afterMs, ended: true });
    }
  } finally {
    silent.stop(true);
  }
}, 90_000);
