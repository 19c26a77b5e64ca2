import { afterEach, beforeEach, expect, test } from 'bun:test';
import { type CrossrefApi, realWorks, startCrossrefApi, syntheticWorks } from '../support/crossref-api.ts';
import { startDaemon, tempDir, waitFor } from '../support/fixtures.ts';
import {
  type Daemon,
  daemonUrl,
  harvestConfig,
  healthz,
  logLines,
  metrics,
  NOTICE_DOI,
  RETRACTED_DOI,
  updatesOf,
} from '../support/harvest-support.ts';

/**
 * A `[[updates.crossref]]` harvest followed by the real daemon process (docs/design.md, "Harvesting Crossref"):
 * it harvests at start; the Updates API serves what it read; /metrics and /healthz tell how fresh the source is,
 * and a source with no success for its `staleAfterHours` is a /healthz warning (still HTTP 200) until a run succeeds.
 */

const SOURCE = 'crossref:crossref';
const label = `{source="${SOURCE}"}`;

let dir: ReturnType<typeof tempDir>;
let apis: CrossrefApi[] = [];
let daemons: Daemon[] = [];

beforeEach(() => {
  dir = tempDir('doi-holdings-daemon-harvest-');
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  await Promise.all(apis.map((a) => a.stop()));
  apis = [];
  dir.remove();
});

async function fake(): Promise<CrossrefApi> {
  const api = await startCrossrefApi({ works: [...realWorks(), ...syntheticWorks(300)] });
  apis.push(api);
  return api;
}

function daemon(api: { url: string }, extra = ''): Daemon {
  const d = startDaemon(harvestConfig(dir.path, api, extra).path);
  daemons.push(d);
  return d;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test('the daemon harvests at start: the Updates API serves it, /metrics and /healthz tell of it', async () => {
  const api = await fake();
  const startedAt = Date.now();
  const d = daemon(api);
  const base = await daemonUrl(d);
  await waitFor(
    () => logLines(d).find((l) => l.event === 'harvest.window_committed'),
    'the first window committed',
    30_000,
  );
  const committed = logLines(d).find((l) => l.event === 'harvest.window_committed')!;
  // the window ends today (the day the run began: a run that straddles midnight ends at the earlier day)
  expect([day(startedAt), day(Date.now())]).toContain(committed.until as string);
  expect(committed).toMatchObject({ harvest: 'crossref', full: true, works: 304, pages: 4, skipped: {} });

  const answers = await updatesOf(base, [RETRACTED_DOI, '10.5555/harvest.1']);
  expect(answers[RETRACTED_DOI]).toContainEqual(
    expect.objectContaining({ updateDoi: NOTICE_DOI, updateType: 'retraction' }),
  );
  expect(answers['10.5555/harvest.1']).toContainEqual(expect.objectContaining({ updateDoi: '10.5555/harvest.0' }));
  expect((await updatesOf(base, [RETRACTED_DOI], '/staging/v2.2/updates'))[RETRACTED_DOI]).toEqual(
    answers[RETRACTED_DOI]!,
  );

  // the source's status is read from the store once the harvest's process has ended, a moment after its last window
  const m = await waitFor(async () => {
    const now = await metrics(base);
    return now.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)! > 0 && now;
  }, 'the harvest counted a success');
  expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)!).toBeGreaterThanOrEqual(
    Math.floor(startedAt / 1000),
  );
  expect(m.get(`doi_holdings_update_source_last_failure_timestamp_seconds${label}`)).toBe(0);
  expect(m.get(`doi_holdings_harvest_last_window_works${label}`)).toBe(304);
  expect(m.get(`doi_holdings_harvest_last_window_rows${label}`)).toBe(committed.rows as number);
  expect(m.get(`doi_holdings_harvest_window_pages${label}`)).toBe(0);
  expect(m.get(`doi_holdings_harvest_window_reached_timestamp_seconds${label}`)).toBe(
    Date.parse(`${committed.until}T00:00:00Z`) / 1000,
  );
  // everyMinutes 60 by default: stale after twice that plus an hour
  expect(m.get(`doi_holdings_update_source_interval_seconds${label}`)).toBe(3600);
  expect(m.get(`doi_holdings_update_source_stale_after_seconds${label}`)).toBe(3 * 3600);

  const h = await healthz(base);
  expect(h.status).toBe(200);
  expect(h.body.status).toBe('ok');
  expect(h.body.warnings).toBeUndefined();
  expect(h.body.updateSources[SOURCE]).toMatchObject({
    state: 'ok',
    reached: committed.until,
    lastError: null,
    lastFailureAt: null,
  });
  expect(Date.parse(h.body.updateSources[SOURCE].lastSuccessAt)).toBe(committed.finishedAt as number);
  expect(await d.stop()).toBe(0);
}, 40_000);

test('a source failing past staleAfterHours is a /healthz warning (still 200) until a run succeeds', async () => {
  const api = await fake();
  // the first three calls answer 503 with Retry-After: 3: the client tries again within the same run, the fourth
  // call comes 9 s or more after the first and succeeds
  api.inject({ kind: 'status', status: 503, retryAfter: '3', times: 3 });
  const d = daemon(api, 'staleAfterHours = 0.001'); // 3.6 s
  const base = await daemonUrl(d);

  const stale = await waitFor(
    async () => {
      const h = await healthz(base);
      return h.body.updateSources?.[SOURCE]?.state === 'stale' && h;
    },
    'the source stale',
    20_000,
  );
  expect(stale.status).toBe(200);
  expect(stale.body.status).toBe('warning');
  expect(stale.body.failed).toBeUndefined();
  expect(stale.body.warnings).toEqual([
    expect.stringContaining(`update source ${SOURCE} is stale: no success since start`),
  ]);
  expect(stale.body.updateSources[SOURCE]).toMatchObject({ state: 'stale', lastSuccessAt: null, reached: null });
  const m = await metrics(base);
  expect(m.get(`doi_holdings_update_source_stale_after_seconds${label}`)).toBe(3.6);
  expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)).toBe(0);

  // the run goes on through the 503s, each retry waiting at least the Retry-After asked for, and succeeds
  const fresh = await waitFor(
    async () => {
      const h = await healthz(base);
      return h.body.updateSources?.[SOURCE]?.state === 'ok' && h;
    },
    'the source fresh again',
    30_000,
  );
  expect(fresh.status).toBe(200);
  expect(fresh.body.status).toBe('ok');
  expect(fresh.body.warnings).toBeUndefined();
  expect(fresh.body.updateSources[SOURCE].lastSuccessAt).not.toBeNull();
  const retries = logLines(d).filter((l) => l.event === 'harvest.retry');
  expect(retries.map((r) => r.status)).toEqual([503, 503, 503]);
  for (const r of retries) expect(r.waitMs as number).toBeGreaterThanOrEqual(3000);
  expect(api.calls.slice(0, 3).map((c) => c.status)).toEqual([503, 503, 503]);
  expect(
    (await metrics(base)).get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)!,
  ).toBeGreaterThan(0);
  expect((await updatesOf(base, [RETRACTED_DOI]))[RETRACTED_DOI]).toContainEqual(
    expect.objectContaining({ updateDoi: NOTICE_DOI }),
  );

  // 3.6 s after that success with no other (the next run is an hour away) it is stale again, counted from the success
  const again = await waitFor(
    async () => {
      const h = await healthz(base);
      return h.body.updateSources?.[SOURCE]?.state === 'stale' && h;
    },
    'stale again',
    20_000,
  );
  expect(again.status).toBe(200);
  expect(again.body.warnings).toEqual([expect.stringContaining(`update source ${SOURCE} is stale: last success`)]);
  expect(await d.stop()).toBe(0);
}, 60_000);

test('a source that does not answer at all: stale after 1.8 s, while its run keeps trying; a stop does not wait for the tries to run out', async () => {
  // a port nothing listens on: every call is refused and tried again
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const url = `http://127.0.0.1:${probe.port}`;
  await probe.stop(true);
  const d = daemon({ url }, 'staleAfterHours = 0.0005');
  const base = await daemonUrl(d);
  const stale = await waitFor(
    async () => {
      const h = await healthz(base);
      return h.body.status === 'warning' && h;
    },
    'the source stale',
    20_000,
  );
  expect(stale.status).toBe(200);
  expect(stale.body.warnings).toEqual([expect.stringContaining(`update source ${SOURCE} is stale`)]);
  expect(stale.body.updateSources[SOURCE]).toMatchObject({ state: 'stale', lastSuccessAt: null });
  const m = await metrics(base);
  expect(m.get(`doi_holdings_update_source_stale_after_seconds${label}`)).toBe(1.8);
  expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)).toBe(0);
  await waitFor(
    () => logLines(d).some((l) => l.event === 'harvest.retry' && l.code === 'HARVEST_UNREACHABLE'),
    'a retry of the refused call',
  );
  // a stop does not wait for the retries to run out: the progress is kept for the next start
  expect(await d.stop()).toBe(0);
  const events = logLines(d).map((l) => l.event);
  expect(events).toContain('harvest.stopped');
  expect(events).toContain('daemon.stopped');
  expect(events).not.toContain('harvest.failed');
}, 40_000);
