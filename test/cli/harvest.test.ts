import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import {
  type CrossrefApi,
  type FakeWork,
  realWorks,
  startCrossrefApi,
  syntheticWorks,
} from '../support/crossref-api.ts';
import { BUN, REPO, runCli, startDaemon, type TestConfig, tempDir, waitFor, writeConfig } from '../support/fixtures.ts';
import {
  type Daemon,
  daemonUrl,
  doisOf,
  harvestConfig,
  MAILTO,
  NOTICE_DOI,
  queries,
  RETRACTED_DOI,
  servingConfig,
  stallCall,
  updatesOf,
} from '../support/harvest-support.ts';

/**
 * `--harvest` run as the real program against the loopback Crossref API (test/support/crossref-api.ts): its report
 * and exit code, the politeness of its calls, a run killed mid-window that the next run resumes without
 * duplicates, the next window's start, and what `--stats` tells of a harvest. What was harvested is read back
 * through the Updates API of a daemon started on the same store afterwards (with no harvest of its own).
 */

let dirs: ReturnType<typeof tempDir>[] = [];
let apis: CrossrefApi[] = [];
let daemons: Daemon[] = [];

beforeEach(() => {
  dirs = [];
  apis = [];
  daemons = [];
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  await Promise.all(apis.map((a) => a.stop()));
  for (const d of dirs) d.remove();
});

function newDir(): string {
  const d = tempDir('doi-holdings-harvest-');
  dirs.push(d);
  return d.path;
}

async function fake(works: FakeWork[], opts: Parameters<typeof startCrossrefApi>[0] = {}): Promise<CrossrefApi> {
  const api = await startCrossrefApi({ ...opts, works });
  apis.push(api);
  return api;
}

const harvest = (cfg: TestConfig, env: Record<string, string> = {}, ...extra: string[]) =>
  runCli(['--harvest', '--config', cfg.path, ...extra], env);

/** The one JSON report line of a harvest run. */
function reportOf(stdout: string): Record<string, any> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

/** Serves the store of `dir` (production and staging) with a daemon that harvests nothing itself. */
async function serve(dir: string): Promise<string> {
  const d = startDaemon(servingConfig(dir).path);
  daemons.push(d);
  return daemonUrl(d);
}

/** What both environments answer for every DOI of `works`. */
async function served(base: string, works: FakeWork[]): Promise<unknown> {
  const dois = doisOf(works);
  return { production: await updatesOf(base, dois), staging: await updatesOf(base, dois, '/staging/v2.2/updates') };
}

test('--harvest with no [[updates.crossref]] configured: exit 2, naming the config', async () => {
  const cfg = writeConfig(newDir());
  const r = await harvest(cfg);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain('[[updates.crossref]]');
  expect(r.stderr).toContain(cfg.path);
});

test('a harvest of the real records and 300 synthetic works: exit 0, one report, the retraction served, polite calls', async () => {
  const works = [...realWorks(), ...syntheticWorks(300)];
  const api = await fake(works);
  const dir = newDir();
  const cfg = harvestConfig(dir, api, 'plusTokenEnv = "TEST_CROSSREF_PLUS"');
  const r = await harvest(cfg, { TEST_CROSSREF_PLUS: 'plus-secret-1' });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const today = new Date().toISOString().slice(0, 10);
  const report = reportOf(r.stdout);
  // 150 synthetic notices (is-update) then 150 works with updated-by (has-update); each real record carries both
  // update-to and updated-by, so it is read in both passes: 152 works a pass, 100 a page, 2 pages a pass
  // the first run is a full one (it reads everything anyway)
  expect(report).toMatchObject({ harvest: 'crossref', full: true, works: 304, pages: 4, skipped: {} });
  expect([today, new Date(Date.now() - 86400_000).toISOString().slice(0, 10)]).toContain(report.until);
  // every row used, but the Lancet pair's relations deposited both ways, read one way (counted, no exit 1)
  expect(report.rows).toBe(report.used + report.skipped.MIRRORED_RELATION);
  expect(Object.keys(report.skipped)).toEqual(['MIRRORED_RELATION']);
  expect(report.used).toBeGreaterThanOrEqual(304);
  expect(report.applied.production.updatesAdded).toBeGreaterThan(150);
  expect(report.applied.staging).toEqual(report.applied.production);

  // every call: mailto in the query (the polite pool), a User-Agent naming the service and the contact, the Plus token
  expect(api.calls).toHaveLength(4);
  for (const c of api.calls) {
    expect(c.params.get('mailto')).toBe(MAILTO);
    expect(c.headers.get('user-agent')).toContain(`mailto:${MAILTO}`);
    expect(c.headers.get('user-agent')).toContain('doi-holdings');
    expect(c.headers.get('crossref-plus-api-token')).toBe('Bearer plus-secret-1');
  }
  expect(queries(api).map((q) => [q.filter.split(',').pop(), q.cursor === '*'])).toEqual([
    ['is-update:true', true],
    ['is-update:true', false],
    ['has-update:true', true],
    ['has-update:true', false],
  ]);

  const base = await serve(dir);
  const answers = await updatesOf(base, [RETRACTED_DOI, NOTICE_DOI, '10.5555/harvest.1']);
  expect(answers[RETRACTED_DOI]).toContainEqual(
    expect.objectContaining({ updateDoi: NOTICE_DOI, updateType: 'retraction' }),
  );
  expect(answers['10.5555/harvest.1']).toContainEqual(
    expect.objectContaining({ updateDoi: '10.5555/harvest.0', updateType: 'retraction' }),
  );
}, 60_000);

test('on a terminal the harvest shows its progress line on stderr, rewritten in place', async () => {
  const api = await fake([...realWorks(), ...syntheticWorks(300)]);
  const cfg = harvestConfig(newDir(), api);
  // script(1) (util-linux) runs it on a pseudo-terminal: stdout and stderr are both the terminal
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [BUN, join(REPO, 'src/main.ts'), '--harvest', '--config', cfg.path].map(quote).join(' ');
  const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], {
    cwd: REPO,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [screen, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  const lines = screen.split(/\r?\n/);
  const reports = lines.filter((l) => l.startsWith('{"harvest"')).map((l) => JSON.parse(l) as Record<string, any>);
  expect(reports.map((r) => [r.harvest, r.works])).toEqual([['crossref', 304]]);
  expect(api.calls.length).toBe(4);
  // the progress line, rewritten in place (stdout's report is written at the end, so not interleaved)
  expect(screen).toMatch(
    /\rharvesting crossref: (notices|updated) [\d,]+ of [\d,]+ works, [\d,]+ pages, [\d.]+ s\x1b\[K/,
  );
}, 60_000);

test('without plusTokenEnv no Crossref-Plus-API-Token is sent', async () => {
  const api = await fake(syntheticWorks(4));
  const r = await harvest(harvestConfig(newDir(), api));
  expect(r.code).toBe(0);
  expect(api.calls.length).toBeGreaterThan(0);
  for (const c of api.calls) expect(c.headers.has('crossref-plus-api-token')).toBe(false);
});

test('plusTokenEnv naming an unset variable: exit 2 naming it, no call made', async () => {
  const api = await fake(syntheticWorks(4));
  const r = await harvest(harvestConfig(newDir(), api, 'plusTokenEnv = "TEST_CROSSREF_PLUS_UNSET"'));
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('TEST_CROSSREF_PLUS_UNSET');
  expect(api.calls).toEqual([]);
});

test('the next run asks from the index date the last window ended (the until of its report)', async () => {
  const works = [...realWorks(), ...syntheticWorks(40)];
  const api = await fake(works);
  const dir = newDir();
  const cfg = harvestConfig(dir, api);
  const first = await harvest(cfg);
  expect(first.code).toBe(0);
  const { until } = reportOf(first.stdout);
  // no `from` configured: the first window has no lower end
  for (const q of queries(api)) expect(q.filter).not.toContain('from-index-date');
  const seen = api.calls.length;

  const second = await harvest(cfg);
  expect(second.stderr).toBe('');
  expect(second.code).toBe(0);
  const next = queries(api).slice(seen);
  expect(next.length).toBeGreaterThan(0);
  expect(next[0]!.filter).toContain(`from-index-date:${until}`);
  for (const q of next) expect(q.filter).toContain(`from-index-date:${until}`);
  // every work was indexed in 2024: the new window holds none, and what was served stays
  expect(reportOf(second.stdout)).toMatchObject({
    from: until,
    full: false,
    works: 0,
    applied: { production: { updatesAdded: 0, updatesWithdrawn: 0 } },
  });
  const base = await serve(dir);
  expect((await updatesOf(base, [RETRACTED_DOI]))[RETRACTED_DOI]).toContainEqual(
    expect.objectContaining({ updateDoi: NOTICE_DOI }),
  );
}, 60_000);

test('--harvest --env is refused before any call: a harvest goes into every environment, its progress kept in production', async () => {
  const api = await fake(realWorks());
  const cfg = harvestConfig(newDir(), api);
  const r = await harvest(cfg, {}, '--env', 'staging');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--harvest goes into every configured environment; --env does not go with it');
  expect(r.stdout).toBe('');
  expect(api.calls).toHaveLength(0);
});

describe('a run killed mid-window', () => {
  /** 1000 synthetic works and the two real ones: 501 per pass, 6 pages each at 100 rows (the last one short). */
  const works = () => [...realWorks(), ...syntheticWorks(1000)];

  /** Starts `--harvest` and SIGKILLs it while call `n` (stalled by the fake) is in flight: n - 1 pages are saved. */
  async function killedAt(cfg: TestConfig, api: CrossrefApi, n: number): Promise<void> {
    stallCall(api, n, 15_000);
    const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--harvest', '--config', cfg.path], {
      cwd: REPO,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    await waitFor(() => api.calls.length >= n || proc.exitCode !== null, `call ${n} to /works`);
    expect(proc.exitCode).toBeNull();
    proc.kill('SIGKILL');
    await proc.exited;
    expect(proc.signalCode).toBe('SIGKILL');
    expect(api.calls).toHaveLength(n);
  }

  /** A clean harvest of the same works into a fresh store: its report and what its daemon serves. */
  async function clean(ws: FakeWork[]): Promise<{ report: Record<string, any>; served: unknown }> {
    const api = await fake(ws);
    const dir = newDir();
    const r = await harvest(harvestConfig(dir, api));
    expect(r.code).toBe(0);
    return { report: reportOf(r.stdout), served: await served(await serve(dir), ws) };
  }

  const figures = (r: Record<string, any>) => ({
    works: r.works,
    rows: r.rows,
    used: r.used,
    pages: r.pages,
    applied: r.applied,
  });

  for (const [n, pass, cursor] of [
    [3, 'is-update:true', /@200$/],
    [9, 'has-update:true', /@200$/],
  ] as const) {
    test(`stateless cursors, killed in the ${pass} pass at call ${n}: the next run resumes at its saved cursor, same result as a clean harvest`, async () => {
      const ws = works();
      const api = await fake(ws, { cursors: 'stateless' });
      const dir = newDir();
      const cfg = harvestConfig(dir, api);
      await killedAt(cfg, api, n);
      // --stats shows the window in progress where the kill left it
      const [stats] = (await runCli(['--stats', '--config', cfg.path])).lines.map((l) => JSON.parse(l));
      expect(stats.harvests.crossref).toMatchObject({
        lastSuccessAt: null,
        window: { pass: n <= 6 ? 'notices' : 'updated', pages: n - 1 },
      });

      const r = await harvest(cfg);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // its FIRST call carries the cursor of the page after the last one saved, in the pass it was in
      const first = queries(api)[n]!;
      expect(first.filter).toContain(pass);
      expect(first.cursor).not.toBe('*');
      expect(first.cursor).toMatch(cursor);
      expect(first.cursor).toBe(queries(api)[n - 1]!.cursor);
      // pages n .. 12 only: none of the saved ones asked again
      expect(api.calls.length - n).toBe(12 - (n - 1));

      const resumed = reportOf(r.stdout);
      const expected = await clean(ws);
      expect(figures(resumed)).toEqual(figures(expected.report));
      expect(await served(await serve(dir), ws)).toEqual(expected.served);
    }, 60_000);
  }

  test('scroll cursors (one per walk): after a kill the next run still ends with the result of a clean harvest', async () => {
    const ws = works();
    const api = await fake(ws);
    const dir = newDir();
    const cfg = harvestConfig(dir, api);
    await killedAt(cfg, api, 4);

    const r = await harvest(cfg);
    // it may resume (the stalled call never moved the walk) or restart the window (it did); nothing else is said
    for (const line of r.stderr.split('\n').filter(Boolean))
      expect(JSON.parse(line)).toMatchObject({ event: 'harvest.window_restarted' });
    expect(r.code).toBe(0);
    const expected = await clean(ws);
    expect(figures(reportOf(r.stdout))).toEqual(figures(expected.report));
    expect(await served(await serve(dir), ws)).toEqual(expected.served);
  }, 60_000);
});

test('--stats: per harvest the last success, its rows and works, and the index date reached', async () => {
  const api = await fake([...realWorks(), ...syntheticWorks(40)]);
  const dir = newDir();
  const cfg = harvestConfig(dir, api);
  // a first run refused by the API (a 400 is not tried again): the failure is shown, no success yet
  api.inject({ kind: 'status', status: 400, times: 1 });
  const refused = await harvest(cfg);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('HARVEST_HTTP_ERROR');
  const before = await runCli(['--stats', '--config', cfg.path]);
  expect(before.code).toBe(0);
  const [never] = before.lines.map((l) => JSON.parse(l));
  expect(never).toMatchObject({
    env: 'production',
    harvests: {
      crossref: { lastSuccessAt: null, reached: null, last: null, lastError: { code: 'HARVEST_HTTP_ERROR' } },
    },
  });
  expect(Date.parse(never.harvests.crossref.lastFailureAt)).toBeGreaterThan(0);

  const r = await harvest(cfg);
  expect(r.code).toBe(0);
  const report = reportOf(r.stdout);
  const stats = await runCli(['--stats', '--config', cfg.path]);
  expect(stats.code).toBe(0);
  const [production, staging] = stats.lines.map((l) => JSON.parse(l));
  expect(production.env).toBe('production');
  const h = production.harvests.crossref;
  expect(h).toMatchObject({
    reached: report.until,
    lastError: null,
    window: null,
    lastFailureAt: never.harvests.crossref.lastFailureAt,
    last: { until: report.until, works: report.works, rows: report.rows, used: report.used, pages: report.pages },
  });
  expect(Date.parse(h.lastSuccessAt)).toBe(report.finishedAt);
  expect(h.lastFullAt).toBe(h.lastSuccessAt); // the first harvest is a full one
  // the progress is kept in the store the harvest ran from (production): the staging line names none
  expect(staging).toMatchObject({ env: 'staging', harvests: {} });
  expect(production.worksWithUpdates).toBe(staging.worksWithUpdates);
}, 60_000);

test('two --harvest of one name started at the same moment: one walks the window, the other is refused (the claim is one transaction)', async () => {
  const api = await fake(syntheticWorks(600));
  api.inject({ kind: 'stall', ms: 300, times: 1000 }); // every call takes a while: both are running at once
  const cfg = harvestConfig(newDir(), api);
  const [a, b] = await Promise.all([
    runCli(['--harvest', '--config', cfg.path]),
    runCli(['--harvest', '--config', cfg.path]),
  ]);
  const codes = [a.code, b.code].sort();
  expect(codes[0]).toBe(0);
  expect(codes[1]).not.toBe(0);
  expect(a.code === 0 ? b.stderr : a.stderr).toContain('HARVEST_STOPPED');
  // one walk of the two passes (600 works, 100 a page, and each pass's last, empty page): not two
  expect(api.calls.length).toBe(8);
}, 90_000);
