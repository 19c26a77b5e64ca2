import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import type { Fault } from '../../../src/base/fault.ts';
import type { Level, Logger } from '../../../src/base/log.ts';
import { Store } from '../../../src/store/index.ts';
import { importInProcess, type SourceResult } from '../../../src/updates/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { SAMPLE } from '../../support/rw-sample.ts';

/**
 * The daemon imports dropped files and URLs in a process of its own (src/updates/following/child-process.ts), as it
 * harvests: the source lands in the stores this process has open, the child runs at the given nice value, a
 * 304 and a source's own fault come back as they are, and a stop, a child that cannot start or dies is an
 * IMPORT_PROCESS_FAILED fault with nothing applied.
 */

let dir: ReturnType<typeof tempDir>;
let stores: Store[];
let server: ReturnType<typeof Bun.serve> | undefined;
beforeEach(() => {
  dir = tempDir();
  stores = [
    Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 }),
    Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 }),
  ];
});
afterEach(async () => {
  await server?.stop(true);
  server = undefined;
  for (const s of stores) await s.close();
  dir.remove();
});

const silent: Logger = { log: (_l: Level) => undefined };
function ok(r: SourceResult | { notModified: true } | Fault): SourceResult {
  if ('code' in r) throw new Error(`${r.code}: ${r.message}`);
  if ('notModified' in r) throw new Error('not modified');
  return r;
}
/** The Retraction Watch sample over HTTP, with an ETag; `stallMs` before the answer. */
function csvServer(opts: { stallMs?: number } = {}) {
  const calls: Headers[] = [];
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      calls.push(req.headers);
      if (new URL(req.url).pathname !== '/rw.csv') return new Response('no', { status: 404 });
      if (req.headers.get('if-none-match') === '"v1"') return new Response(null, { status: 304 });
      if (opts.stallMs) await Bun.sleep(opts.stallMs);
      return new Response(SAMPLE, { headers: { etag: '"v1"', 'content-type': 'text/csv' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/rw.csv`, calls };
}
const childrenOfThis = () =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
/** The niceness a child started under `nice -n <by>` has: the runner's own plus `by`, up to 19 */
function niceBelowRunner(by: number): number {
  const own = getPriority();
  expect(own, `the runner at nice ${own} has no lower priority to give a child`).toBeLessThan(19);
  return Math.min(19, own + by);
}
const niceOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};

test('a dropped file: imported by the child into both stores open here, its report back', async () => {
  const file = join(dir.path, 'rw.csv');
  await Bun.write(file, SAMPLE);
  const r = ok(await importInProcess(stores, file, { nice: 0 }, silent));
  expect(r.format).toBe('retraction-watch-csv');
  expect(r.parsed.report.rows).toBeGreaterThan(2_900);
  expect(Object.keys(r.applied).sort()).toEqual(['production', 'staging']);
  for (const s of stores) expect(s.updatesIndex.size).toBe(r.applied.production!.worksTouched);
  expect(r.applied.production!.worksTouched).toBeGreaterThan(2_000);
});

test('a URL: the child runs at the nice value; a second fetch with the validators is not modified', async () => {
  const { url, calls } = csvServer({ stallMs: 800 });
  const before = childrenOfThis();
  const run = importInProcess(stores, url, { nice: 7 }, silent);
  await waitFor(() => calls.length > 0, 'the fetch');
  const child = childrenOfThis().filter((p) => !before.includes(p));
  expect(child).toHaveLength(1);
  // nice -n 7 adds to the runner's own niceness (a runner under `nice -n 5` gives 12), up to 19
  expect(niceOf(child[0]!)).toBe(niceBelowRunner(7));
  const r = ok(await run);
  expect(r.state).toEqual({ etag: '"v1"', lastModified: undefined });
  expect(stores[0]!.updatesIndex.size).toBeGreaterThan(2_000);
  expect(await importInProcess(stores, url, { nice: 0, conditional: r.state }, silent)).toEqual({ notModified: true });
  expect(calls[1]!.get('if-none-match')).toBe('"v1"');
});

test("a source's own fault comes back as it is", async () => {
  const { url } = csvServer();
  expect(await importInProcess(stores, url.replace('rw.csv', 'gone.csv'), { nice: 0 }, silent)).toMatchObject({
    code: 'SOURCE_HTTP_ERROR',
  });
  expect(await importInProcess(stores, join(dir.path, 'none.csv'), { nice: 0 }, silent)).toMatchObject({
    code: 'SOURCE_NOT_FOUND',
  });
});

test('a stop while the source has not answered: its fetch is ended, nothing applied', async () => {
  const { url, calls } = csvServer({ stallMs: 5_000 });
  const stop = new AbortController();
  const run = importInProcess(stores, url, { nice: 0, signal: stop.signal }, silent);
  await waitFor(() => calls.length > 0, 'the fetch');
  stop.abort();
  const r = await run; // a child not stopped would import the source, 5 s later
  expect(r).toMatchObject({ code: 'SOURCE_UNREACHABLE' });
  expect((r as Fault).message).toContain(url);
  expect(stores[0]!.updatesIndex.size).toBe(0);
});

test('a stop while rows stream: IMPORT_STOPPED, nothing applied, and no scratch rows left behind', async () => {
  // the sample's rows 30 times over (the same works again: a long import of a small feed)
  const [header, ...rows] = SAMPLE.trimEnd().split('\n');
  const file = join(dir.path, 'long.csv');
  await Bun.write(file, `${header}\n${Array.from({ length: 30 }, () => rows.join('\n')).join('\n')}\n`);
  const stop = new AbortController();
  const run = importInProcess(stores, file, { nice: 0, signal: stop.signal }, silent);
  await waitFor(() => stores.every((s) => s.importScratchRows() > 0), 'rows in the scratch space', 20_000);
  stop.abort();
  const r = await run;
  expect(r).toMatchObject({ code: 'IMPORT_STOPPED' });
  for (const s of stores) {
    expect(s.importScratchRows()).toBe(0);
    expect(s.updatesIndex.size).toBe(0);
  }
});

test('a stop before the child is ready, or before the call: the job is never run', async () => {
  const file = join(dir.path, 'rw.csv');
  await Bun.write(file, SAMPLE);
  const early = new AbortController();
  const run = importInProcess(stores, file, { nice: 0, signal: early.signal }, silent);
  early.abort(); // the child is still starting
  expect(await run).toMatchObject({ code: 'IMPORT_PROCESS_FAILED' });
  expect(await importInProcess(stores, file, { nice: 0, signal: AbortSignal.abort() }, silent)).toMatchObject({
    code: 'IMPORT_PROCESS_FAILED',
  });
  expect(stores[0]!.updatesIndex.size).toBe(0);
});

test('a command that cannot be started: IMPORT_PROCESS_FAILED naming it', async () => {
  const r = await importInProcess(stores, join(dir.path, 'x.csv'), { nice: 0 }, silent, [
    `${dir.path}/no-such-program`,
  ]);
  expect(r).toMatchObject({ code: 'IMPORT_PROCESS_FAILED' });
  expect((r as Fault).message).toContain('no-such-program');
});
