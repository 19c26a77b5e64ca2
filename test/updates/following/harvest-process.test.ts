import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import type { Fault } from '../../../src/base/fault.ts';
import { idleSchedulingWorks, priorityArgv } from '../../../src/base/index.ts';
import type { Level, Logger } from '../../../src/base/log.ts';
import type { CrossrefHarvestSettings } from '../../../src/config/index.ts';
import { Store, servedUpdates } from '../../../src/store/index.ts';
import { harvestInProcess, loadState, type WindowFigures } from '../../../src/updates/index.ts';
import { type CrossrefApi, realWorks, startCrossrefApi, syntheticWorks } from '../../support/crossref-api.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';

/**
 * The daemon's harvests run in a process of their own (src/updates/following/harvest-process.ts): the window lands
 * in the stores this process has open, the child's log lines come to this process's logger, every thread of the
 * child runs at the harvest's nice value and scheduling policy (SCHED_IDLE unless `idle` is off) and none of this
 * process's, a stop ends the run between pages with its
 * progress saved, and a child that fails, dies or cannot start is a Fault.
 */

const ARTICLE = '10.1016/s0140-6736(20)31180-6';
const NOTICE = '10.1016/s0140-6736(20)31324-6';

let dir: ReturnType<typeof tempDir>;
let stores: Store[];
let api: CrossrefApi | undefined;
beforeEach(() => {
  dir = tempDir();
  stores = [
    Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 }),
    Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 }),
  ];
});
afterEach(async () => {
  await api?.stop();
  api = undefined;
  for (const s of stores) await s.close();
  dir.remove();
});

function settings(a: CrossrefApi, more: Partial<CrossrefHarvestSettings> = {}): CrossrefHarvestSettings {
  return {
    name: 'crossref',
    url: a.url,
    mailto: 'ops@example.org',
    everyMs: 3600_000,
    rows: 100,
    fullEveryMs: 0,
    staleAfterMs: 1e9,
    nice: 7,
    idle: true,
    ...more,
  };
}
function capture(): Logger & { lines: { level: Level; event: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: Level; event: string; fields?: Record<string, unknown> }[] = [];
  return { lines, log: (level, event, fields) => lines.push({ level, event, ...(fields ? { fields } : {}) }) };
}
function ok(r: WindowFigures | Fault): WindowFigures {
  if ('code' in r) throw new Error(`${r.code}: ${r.message}`);
  return r;
}
/** the fields of a /proc stat line after the command name: [0] state, [1] ppid, [16] nice, [38] scheduling policy */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
/** The niceness a child started under `nice -n <by>` has: the runner's own plus `by`, up to 19 */
function niceBelowRunner(by: number): number {
  const own = getPriority();
  expect(own, `the runner at nice ${own} has no lower priority to give a child`).toBeLessThan(19);
  return Math.min(19, own + by);
}
/** nice value of every thread of a process */
const threadNices = (pid: number | 'self') =>
  readdirSync(`/proc/${pid}/task`).map((tid) => Number(statFields(`/proc/${pid}/task/${tid}/stat`)[16]));
/** scheduling policy of every thread of a process (0 SCHED_OTHER, 5 SCHED_IDLE) */
const threadPolicies = (pid: number | 'self') =>
  readdirSync(`/proc/${pid}/task`).map((tid) => Number(statFields(`/proc/${pid}/task/${tid}/stat`)[38]));
const SCHED_IDLE = 5;
/** the processes this one started */
function children(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (Number(statFields(`/proc/${pid}/stat`)[1]) === process.pid) out.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test('a run in its own process: the window lands in the stores open here, its log lines come here, the child runs at the harvest nice value under SCHED_IDLE', async () => {
  api = await startCrossrefApi({ works: [...realWorks(), ...syntheticWorks(250)] });
  api.inject({ kind: 'stall', ms: 1500, times: 1 });
  const log = capture();
  const before = children();
  const run = harvestInProcess(settings(api), stores, log, { version: 'test' });
  await waitFor(() => api!.maxInFlight > 0, 'the first call');
  const child = children().filter((p) => !before.includes(p));
  expect(child).toHaveLength(1);
  const nices = threadNices(child[0]!);
  expect(nices.length).toBeGreaterThan(1);
  // every thread of the child, Bun's HTTP client included; nice -n 7 adds to the runner's own niceness
  expect(new Set(nices)).toEqual(new Set([niceBelowRunner(7)]));
  expect(new Set(threadNices('self'))).toEqual(new Set([getPriority()]));
  expect(idleSchedulingWorks()).toBe(true); // else chrt (util-linux) is missing here, or refused SCHED_IDLE
  expect(new Set(threadPolicies(child[0]!))).toEqual(new Set([SCHED_IDLE]));
  expect(new Set(threadPolicies('self'))).toEqual(new Set([0]));

  const r = ok(await run);
  expect(r).toMatchObject({ works: 254, full: true, skipped: {} });
  expect(Object.keys(r.applied).sort()).toEqual(['production', 'staging']);
  for (const s of stores)
    expect(servedUpdates(s.updatesOf(ARTICLE))).toContainEqual(
      expect.objectContaining({ updateDoi: NOTICE, updateType: 'retraction' }),
    );
  // the Lancet article and its notice deposit their relation both ways: the notice is never shown as retracted
  for (const s of stores)
    expect(servedUpdates(s.updatesOf(NOTICE)).filter((u) => u.updateType === 'retraction')).toEqual([]);
  expect(r.skipped.MIRRORED_RELATION).toBeGreaterThan(0);
  expect(log.lines.find((l) => l.event === 'harvest.window_committed')).toMatchObject({
    fields: { harvest: 'crossref', works: 254 },
  });
  expect(loadState(stores[0]!, 'crossref')).toMatchObject({ window: undefined, last: { works: 254 } });
  expect(children().filter((p) => !before.includes(p) && statFields(`/proc/${p}/stat`)[0] !== 'Z')).toEqual([]); // the child is gone

  // these stay open and writable
  await stores[0]!.saveSourceState('url', 'https://example.org/after', { etag: 'x' });
  expect(stores[0]!.sourceState('url', 'https://example.org/after')).toEqual({ etag: 'x' });
});

test('idle = false: the child runs at the nice value under the normal policy', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(20) });
  api.inject({ kind: 'stall', ms: 1500, times: 1 });
  const before = children();
  const run = harvestInProcess(settings(api, { idle: false }), stores, capture(), { version: 'test' });
  await waitFor(() => api!.maxInFlight > 0, 'the first call');
  const child = children().filter((p) => !before.includes(p));
  expect(child).toHaveLength(1);
  expect(new Set(threadNices(child[0]!))).toEqual(new Set([niceBelowRunner(7)]));
  expect(new Set(threadPolicies(child[0]!))).toEqual(new Set([0]));
  expect(ok(await run)).toMatchObject({ works: 20 });
});

test('a stop ends the run between pages, its progress saved; the next run carries on to a whole window', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(1_050) });
  api.inject({ kind: 'stall', ms: 300, times: 100 });
  const log = capture();
  const stopping = new AbortController();
  const run = harvestInProcess(settings(api), stores, log, { version: 'test', signal: stopping.signal });
  await waitFor(() => api!.calls.length >= 2, 'two pages');
  stopping.abort();
  const stopped = await run;
  expect(stopped).toMatchObject({ code: 'HARVEST_STOPPED' });
  expect(log.lines.map((l) => l.event)).toContain('harvest.stopped');
  const saved = loadState(stores[0]!, 'crossref').window!;
  expect(saved.pages).toBeGreaterThanOrEqual(1);
  expect(saved.pages).toBeLessThan(11);

  api.clearFaults();
  const calls = api.calls.length;
  const r = ok(await harvestInProcess(settings(api), stores, log, { version: 'test' }));
  expect(r).toMatchObject({ works: 1_050, used: 1_050, full: true });
  // carried on from the saved cursor: the first call of the second run is not a fresh walk
  expect(api.calls[calls]!.params.get('cursor')).not.toBe('*');
  for (const w of syntheticWorks(1_050)
    .filter((_, i) => i % 2 === 1)
    .slice(0, 20))
    expect(servedUpdates(stores[1]!.updatesOf(w.DOI.toLowerCase()))).toHaveLength(1);
});

test('a child that cannot open its store: HARVEST_PROCESS_FAILED, logged as harvest.failed', async () => {
  api = await startCrossrefApi({ works: realWorks() });
  const log = capture();
  const file = `${dir.path}/not-a-folder`;
  await Bun.write(file, 'x');
  const broken = {
    env: 'production',
    opened: { dir: file, mapSizeBytes: 1 << 30, changeFeedKeepMs: 1000 },
  } as unknown as Store;
  const r = await harvestInProcess(settings(api), [broken], log, { version: 'test' });
  expect(r).toMatchObject({ code: 'HARVEST_PROCESS_FAILED' });
  expect((r as Fault).message).toContain('the harvest process failed');
  expect(log.lines.find((l) => l.event === 'harvest.failed')).toMatchObject({
    level: 'error',
    fields: { code: 'HARVEST_PROCESS_FAILED' },
  });
  expect(api.calls).toHaveLength(0);
});

test('a child killed mid-window: HARVEST_PROCESS_FAILED naming the signal; the next run carries on from its last saved page', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(1_050) });
  api.inject({ kind: 'stall', ms: 200, times: 100 });
  const log = capture();
  const before = children();
  const run = harvestInProcess(settings(api), stores, log, { version: 'test' });
  await waitFor(() => api!.calls.length >= 3, 'three pages');
  for (const p of children().filter((c) => !before.includes(c))) process.kill(p, 'SIGKILL');
  const r = await run;
  expect(r).toMatchObject({ code: 'HARVEST_PROCESS_FAILED' });
  expect((r as Fault).message).toContain('SIGKILL');
  expect(log.lines.find((l) => l.event === 'harvest.failed')).toMatchObject({
    fields: { code: 'HARVEST_PROCESS_FAILED' },
  });
  expect(loadState(stores[0]!, 'crossref').window!.pages).toBeGreaterThanOrEqual(1);

  api.clearFaults();
  const next = ok(await harvestInProcess(settings(api), stores, log, { version: 'test' }));
  expect(next).toMatchObject({ works: 1_050, used: 1_050 });
});

test('a command that cannot be started: HARVEST_PROCESS_FAILED naming it', async () => {
  api = await startCrossrefApi({ works: realWorks() });
  const log = capture();
  // no chrt or nice in front: they would start, and fail to start it themselves
  const r = await harvestInProcess(settings(api, { nice: 0, idle: false }), stores, log, { version: 'test' }, [
    `${dir.path}/no-such-program`,
  ]);
  expect(r).toMatchObject({ code: 'HARVEST_PROCESS_FAILED' });
  expect((r as Fault).message).toContain('no-such-program');
  expect(api.calls).toHaveLength(0);
});

test('the priority commands: chrt --idle when idle and it works here, nice when above 0; otherwise nice only, and said', () => {
  const chrt = () => true;
  expect(priorityArgv({ nice: 19, idle: true }, chrt)).toEqual({ argv: ['chrt', '--idle', '0', 'nice', '-n', '19'] });
  expect(priorityArgv({ nice: 0, idle: true }, chrt)).toEqual({ argv: ['chrt', '--idle', '0'] });
  expect(priorityArgv({ nice: 10, idle: false }, chrt)).toEqual({ argv: ['nice', '-n', '10'] });
  expect(priorityArgv({ nice: 10 }, chrt)).toEqual({ argv: ['nice', '-n', '10'] });
  expect(priorityArgv({ nice: 0 }, chrt)).toEqual({ argv: [] });
  expect(priorityArgv({ nice: 19, idle: true }, () => false)).toEqual({
    argv: ['nice', '-n', '19'],
    idleUnavailable: true,
  });
  expect(priorityArgv({ nice: 19, idle: false }, () => false)).toEqual({ argv: ['nice', '-n', '19'] });
});
