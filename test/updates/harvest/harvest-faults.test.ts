import { afterEach, beforeEach, expect, test } from 'bun:test';
import type { Logger } from '../../../src/base/log.ts';
import { Store, servedUpdates } from '../../../src/store/index.ts';
import { CrossrefHarvest, loadState } from '../../../src/updates/index.ts';
import { type CrossrefApi, startCrossrefApi, syntheticWorks } from '../../support/crossref-api.ts';
import { tempDir } from '../../support/fixtures.ts';

/**
 * The harvest under Crossref's faults and the daemon's stops: a full window that fails run after run does not hold
 * back the notices indexed meanwhile, and a stop does not throw away the page the server already served.
 */

const DAY = 86_400_000;
const START = Date.parse('2030-01-01T12:00:00Z');
const VICTIM = '10.5555/victim';

let dir: ReturnType<typeof tempDir>;
let store: Store;
let api: CrossrefApi | undefined;
beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
});
afterEach(async () => {
  await api?.stop();
  api = undefined;
  await store.close();
  dir.remove();
});

const settings = (url: string) => ({
  name: 'crossref',
  url,
  mailto: 'ops@example.org',
  everyMs: 3600_000,
  rows: 100,
  fullEveryMs: 7 * DAY,
  staleAfterMs: 1e9,
  nice: 0,
  idle: false,
});
function recorder(): { log: Logger; events: string[] } {
  const events: string[] = [];
  return { events, log: { log: (_level: string, event: string) => void events.push(event) } as unknown as Logger };
}

test('a full window given up (its pages lost again and again) is followed by an incremental one, then the full is tried again', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(1000, { days: ['2024-05-01'] }) });
  const first = await new CrossrefHarvest(settings(api.url), [store], recorder().log, {
    version: 't',
    retryBaseMs: 1,
  }).run({ now: () => START });
  if ('code' in first) throw new Error(first.message);
  // a week later a retraction notice is indexed; a gateway answers 502 to one call in six after Crossref served
  // the page (its scroll moved on), so the full window loses a page on every try
  api.works.push({
    DOI: '10.5555/new.notice',
    indexed: '2030-01-07',
    'update-to': [{ DOI: VICTIM, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2030, 1, 7]] } }],
  });
  let n = 0;
  const flaky = (async (url: string, init: RequestInit) => {
    const res = await fetch(url, init);
    if (++n % 6 !== 0) return res;
    await res.text();
    return new Response('bad gateway', { status: 502 });
  }) as unknown as typeof fetch;
  const h = new CrossrefHarvest(settings(api.url), [store], recorder().log, {
    version: 't',
    retryBaseMs: 1,
    fetch: flaky,
  });
  const at = (hours: number) => () => START + 7 * DAY + hours * 3600_000;
  const full = await h.run({ now: at(1) });
  expect(full).toMatchObject({ code: 'HARVEST_CURSOR_EXPIRED' });
  expect(loadState(store, 'crossref').fullGaveUpAt).toBe(at(1)());
  // the next run is incremental: the new notice is served
  const incremental = await h.run({ now: at(2) });
  if ('code' in incremental) throw new Error(incremental.message);
  expect(incremental).toMatchObject({ full: false, from: '2030-01-01', until: '2030-01-08' });
  expect(servedUpdates(store.updatesOf(VICTIM)).map((u) => u.updateDoi)).toEqual(['10.5555/new.notice']);
  expect(loadState(store, 'crossref').fullGaveUpAt).toBeUndefined();
  // and the one after tries the full window again (here whole: the gateway is mended)
  const again = await new CrossrefHarvest(settings(api.url), [store], recorder().log, {
    version: 't',
    retryBaseMs: 1,
  }).run({ now: at(3) });
  if ('code' in again) throw new Error(again.message);
  expect(again.full).toBe(true);
});

/** A fetch whose replies come `delayMs` after the server answered (as a big page's body does). */
function slowReplies(delayMs: number): typeof fetch {
  return (async (url: string, init: RequestInit) => {
    const res = await fetch(url);
    const body = await res.text();
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, delayMs);
      init.signal?.addEventListener('abort', () => {
        clearTimeout(t);
        reject(new DOMException('The operation was aborted.', 'AbortError'));
      });
    });
    return new Response(body, { status: res.status, headers: res.headers });
  }) as unknown as typeof fetch;
}

/** `fetch` that tells (`started`) when its `n`th call begins: a stop placed by the calls made, not by a clock. */
function callsStarted(
  n: number,
  fetch: typeof globalThis.fetch,
): { fetch: typeof globalThis.fetch; started: Promise<void> } {
  const started = Promise.withResolvers<void>();
  let calls = 0;
  const counted = ((url: string, init: RequestInit) => {
    if (++calls === n) started.resolve();
    return fetch(url, init);
  }) as unknown as typeof globalThis.fetch;
  return { fetch: counted, started: started.promise };
}

test('a stop while a page is in flight lets the page come: the next run resumes where it stopped, with no page lost', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(1050) });
  const { log, events } = recorder();
  const stop = new AbortController();
  const third = callsStarted(3, slowReplies(300)); // a few pages in, one in flight
  const running = new CrossrefHarvest(settings(api.url), [store], log, {
    version: 't',
    retryBaseMs: 1,
    fetch: third.fetch,
  }).run({ signal: stop.signal });
  await third.started;
  stop.abort();
  const stopped = await running;
  expect(stopped).toMatchObject({ code: 'HARVEST_STOPPED' });
  const saved = loadState(store, 'crossref').window!;
  expect(saved.pages).toBeGreaterThan(0);
  // the call in flight at the stop came whole and was saved
  expect(saved.pages).toBe(api.calls.length);
  const done = await new CrossrefHarvest(settings(api.url), [store], log, { version: 't', retryBaseMs: 1 }).run();
  if ('code' in done) throw new Error(done.message);
  expect(events).toContain('harvest.resumed');
  expect(events).not.toContain('harvest.window_restarted');
  expect(done.works).toBe(1050);
});

test('a page still not come when the grace ends is given up: the resumed window starts again, and still ends whole', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(1050) });
  const { log, events } = recorder();
  const stop = new AbortController();
  // stopped while its third page is on its way (two pages in), a page that takes longer than the grace
  const third = callsStarted(3, slowReplies(300));
  const running = new CrossrefHarvest(settings(api.url), [store], log, {
    version: 't',
    retryBaseMs: 1,
    fetch: third.fetch,
    stopGraceMs: 50,
  }).run({ signal: stop.signal });
  await third.started;
  stop.abort();
  expect(await running).toMatchObject({ code: 'HARVEST_STOPPED' });
  const done = await new CrossrefHarvest(settings(api.url), [store], log, { version: 't', retryBaseMs: 1 }).run();
  if ('code' in done) throw new Error(done.message);
  expect(events).toContain('harvest.window_restarted');
  expect(done.works).toBe(1050);
});

test('a window is claimed before its first call, and its heartbeat is saved while a page is tried again', async () => {
  api = await startCrossrefApi({ works: syntheticWorks(200) });
  let clock = START;
  const heartbeats: (number | undefined)[] = [];
  let failing = 3;
  const unsteady = (async (url: string, init: RequestInit) => {
    heartbeats.push(loadState(store, 'crossref').window?.heartbeatAt);
    clock += 60_000; // a minute between tries
    if (failing-- > 0) return new Response('busy', { status: 503 });
    return fetch(url, init);
  }) as unknown as typeof fetch;
  const r = await new CrossrefHarvest(settings(api.url), [store], recorder().log, {
    version: 't',
    retryBaseMs: 200,
    fetch: unsteady,
  }).run({ now: () => clock });
  if ('code' in r) throw new Error(r.message);
  // the first call already finds the window saved; each try after a failure finds the heartbeat moved on
  expect(heartbeats.slice(0, 4)).toEqual([START, START + 60_000, START + 120_000, START + 180_000]);
});
