import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { appendFileSync, copyFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  runCli,
  startDaemon,
  type TestConfig,
  tempDir,
  waitFor,
  waitForLog,
  writeConfig,
} from '../support/fixtures.ts';
import { healthz, metrics } from '../support/harvest-support.ts';
import {
  csv,
  FRANKEN,
  FRANKEN_DOI,
  ROWS,
  row,
  SAMPLE_PATH,
  UNAVAILABLE,
  UNAVAILABLE_DOI,
} from '../support/rw-sample.ts';
import { IMPORT_FIGURES } from '../support/update-imports.ts';

/**
 * Update information reaching the running daemon (docs/design.md, "Update information") through its public surfaces only: files
 * dropped into `[updates] dropDir`, `[[updates.urls]]` fetched on a schedule with conditional GET, and the
 * Updates API (docs/interface.md, "Updates API") of the real daemon process answering over HTTP.
 */

/** Record 70284: RetractionDOI "Unavailable" too. */
const ASCE_DOI = '10.1061/41007(331)29';
const ABSENT_DOI = '10.5555/not-in-any-file';

let dir: ReturnType<typeof tempDir>;
let daemons: { stop(): Promise<number> }[] = [];
let servers: { stop(force?: boolean): unknown }[] = [];

beforeEach(() => {
  dir = tempDir('doi-holdings-updates-');
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  for (const s of servers) s.stop(true);
  servers = [];
  dir.remove();
});

type Daemon = ReturnType<typeof startDaemon>;

function daemon(cfg: TestConfig): Daemon {
  const d = startDaemon(cfg.path);
  daemons.push(d);
  return d;
}

/** The parsed JSON log lines of a daemon (stderr, one object per line). */
function logLines(d: Daemon): Record<string, unknown>[] {
  return d
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function events(d: Daemon, event: string): Record<string, unknown>[] {
  return logLines(d).filter((l) => l.event === event);
}

/** The daemon listens on 127.0.0.1:0; its real address is in the `daemon.started` line. */
async function daemonUrl(d: Daemon): Promise<string> {
  await waitForLog(d, '"daemon.started"');
  const url = events(d, 'daemon.started')[0]?.url;
  if (typeof url !== 'string') throw new Error(`no url in daemon.started: ${d.log()}`);
  return url.replace(/\/$/, '');
}

interface Doc {
  doi: string;
  statusCode: number;
  updates: Record<string, unknown>[];
}

async function postUpdates(base: string, dois: string[], path = '/v2.2/updates'): Promise<Doc[]> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: JSON.stringify({ dois }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${text}`);
  return (JSON.parse(text) as { documents: Doc[] }).documents;
}

async function updatesOf(base: string, doi: string, path?: string): Promise<Record<string, unknown>[]> {
  const [doc] = await postUpdates(base, [doi], path);
  expect(doc).toMatchObject({ doi, statusCode: 200 });
  return doc!.updates;
}

function configWith(extra: string): TestConfig {
  return writeConfig(dir.path, `\n${extra}\n`);
}

describe('drop folder', () => {
  test('the sample dropped while the daemon runs is served; a new version of the file without a row withdraws that update', async () => {
    const cfg = configWith('[updates]\ndropDir = "updates"');
    const drop = join(dir.path, 'updates'); // relative to the config file's folder
    const d = daemon(cfg);
    const base = await daemonUrl(d);
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([]);

    copyFileSync(SAMPLE_PATH, join(drop, 'retractions.csv'));
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length > 0, 'the dropped sample served');

    const docs = await postUpdates(base, [FRANKEN_DOI, UNAVAILABLE_DOI, ABSENT_DOI, 'not a doi']);
    expect(docs.slice(0, 3)).toEqual([
      { doi: FRANKEN_DOI, statusCode: 200, updates: [FRANKEN] },
      { doi: UNAVAILABLE_DOI, statusCode: 200, updates: [UNAVAILABLE] },
      { doi: ABSENT_DOI, statusCode: 200, updates: [] },
    ]);
    expect(docs[3]).toMatchObject({ doi: 'not a doi', statusCode: 400, updates: [] });
    // v2.1 answers the same, and so does staging: update information goes to every environment
    expect(await postUpdates(base, [FRANKEN_DOI, UNAVAILABLE_DOI, ABSENT_DOI, 'not a doi'], '/v2.1/updates')).toEqual(
      docs,
    );
    // each environment's store takes the feed in its own transaction, one after the other
    await waitFor(
      async () => (await updatesOf(base, FRANKEN_DOI, '/staging/v2.2/updates')).length > 0,
      'staging served',
    );
    expect(await updatesOf(base, FRANKEN_DOI, '/staging/v2.2/updates')).toEqual([FRANKEN]);
    // a date of the sample written M/D/YYYY H:MM is served as a date alone
    const asce = (await postUpdates(base, [ASCE_DOI]))[0]!.updates;
    expect(asce.length).toBeGreaterThan(0); // else the loop below checks nothing
    for (const u of asce) expect(u.updateDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    // served once committed; logged once the import process has ended and reported
    const [imported] = await waitFor(
      () => events(d, 'updates.imported').length > 0 && events(d, 'updates.imported'),
      'the import logged',
    );
    expect(imported).toMatchObject({
      source: join(drop, 'retractions.csv'),
      format: 'retraction-watch-csv',
      rows: 3000,
      skipped: {},
      firstSkipped: [],
    });
    // the names of the --import-updates report (test/cli/import-updates.test.ts)
    expect(Object.keys(imported)).toEqual(['time', 'level', 'event', ...IMPORT_FIGURES]);

    // the same file name again, one row (record 70000) removed: the feed is replaced, that update disappears
    const without = ROWS.filter((l) => !l.startsWith('70000,'));
    expect(without).toHaveLength(2999);
    writeFileSync(join(drop, 'retractions.csv'), csv(without));
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length === 0, 'the removed row withdrawn');
    await waitFor(
      async () => (await updatesOf(base, FRANKEN_DOI, '/staging/v2.2/updates')).length === 0,
      'staging withdrawn',
    );
    expect(await updatesOf(base, UNAVAILABLE_DOI)).toEqual([UNAVAILABLE]);
    // the import process commits, then ends; the daemon logs the import once it has the child's report
    const imports = await waitFor(
      () => events(d, 'updates.imported').length >= 2 && events(d, 'updates.imported'),
      'the second import logged',
    );
    expect(imports).toHaveLength(2);
    expect(imports[1]).toMatchObject({
      rows: 2999,
      applied: { production: { updatesWithdrawn: 1, updatesAdded: 0, updatesChanged: 0 } },
    });
  }, 30_000);

  test('a newer snapshot under another name replaces the older one; at restart only files not yet imported are read', async () => {
    const cfg = configWith('[updates]\ndropDir = "updates"');
    const drop = join(dir.path, 'updates');
    const first = daemon(cfg);
    const base1 = await daemonUrl(first);
    writeFileSync(join(drop, 'rw-2024-01.csv'), csv([row(70000), row(70264)]));
    await waitFor(async () => (await updatesOf(base1, FRANKEN_DOI)).length > 0, 'January snapshot served');
    expect(await updatesOf(base1, UNAVAILABLE_DOI)).toEqual([UNAVAILABLE]);
    expect(await updatesOf(base1, ASCE_DOI)).toEqual([]);
    expect(await first.stop()).toBe(0);
    daemons = [];

    // dropped while the daemon is down, newer than the January file
    const feb = join(drop, 'rw-2024-02.csv');
    writeFileSync(feb, csv([row(70264), row(70284)]));
    const later = Date.now() / 1000 + 60;
    utimesSync(feb, later, later);

    const second = daemon(cfg);
    const base2 = await daemonUrl(second);
    await waitFor(async () => (await updatesOf(base2, ASCE_DOI)).length > 0, 'February snapshot served');
    expect(await updatesOf(base2, FRANKEN_DOI)).toEqual([]);
    expect(await updatesOf(base2, UNAVAILABLE_DOI)).toEqual([UNAVAILABLE]);
    expect((await updatesOf(base2, ASCE_DOI))[0]).toMatchObject({
      updateDoi: null,
      updateType: 'retraction',
      updateDate: '2012-04-26',
    });
    // the January file was imported by the first run and is not read again (the log line follows the commit,
    // which requests may see first)
    await waitFor(() => events(second, 'updates.imported').length > 0, 'the import logged');
    expect(events(second, 'updates.imported').map((e) => e.source)).toEqual([feb]);
  }, 30_000);

  test('a file still being copied in when the daemon starts is imported whole once it holds still, never cut short', async () => {
    const cfg = configWith('[updates]\ndropDir = "updates"');
    const drop = join(dir.path, 'updates');
    mkdirSync(drop, { recursive: true });
    // two thirds of the sample at first (past the shrink guard's half: cut short, it would be taken), then ten
    // rows every 50 ms until well after the daemon's start-up scan, then the rest
    const path = join(drop, 'retractions.csv');
    writeFileSync(path, csv(ROWS.slice(0, 2000)));
    let written = 2000;
    const grow = setInterval(() => {
      if (written >= ROWS.length - 10) return;
      appendFileSync(path, `${ROWS.slice(written, written + 10).join('\n')}\n`);
      written += 10;
    }, 50);
    const d = daemon(cfg);
    let base: string;
    try {
      base = await daemonUrl(d);
      await Bun.sleep(1500);
    } finally {
      clearInterval(grow);
    }
    if (written < ROWS.length) appendFileSync(path, `${ROWS.slice(written).join('\n')}\n`);
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length > 0, 'the whole file served');
    await waitFor(() => events(d, 'updates.imported').length > 0, 'the import logged');
    await Bun.sleep(500); // a second import, had there been one, is logged by now
    expect(
      events(d, 'updates.imported').map((e) => [
        e.rows,
        (e.applied as Record<string, Record<string, number>>).production!.updatesWithdrawn,
      ]),
    ).toEqual([[3000, 0]]);
  }, 30_000);

  test('hidden and temporary files in the drop folder are not imported, as at start-up', async () => {
    const cfg = configWith('[updates]\ndropDir = "updates"');
    const drop = join(dir.path, 'updates');
    const d = daemon(cfg);
    const base = await daemonUrl(d);
    // a download in progress (names the bucket watcher ignores): Crossref JSON, which no later CSV would replace
    const work = {
      DOI: '10.5555/partial.work',
      'updated-by': [{ DOI: '10.5555/partial.notice', type: 'retraction', updated: { 'date-parts': [[2020, 1, 2]] } }],
    };
    writeFileSync(join(drop, 'works.json.partial'), JSON.stringify(work));
    writeFileSync(join(drop, '.works.json'), JSON.stringify(work));
    writeFileSync(join(drop, 'works.json~'), JSON.stringify(work));
    await Bun.sleep(700); // longer than the drop folder's write-finish wait (300 ms)
    writeFileSync(join(drop, 'rw.csv'), csv([row(70000)]));
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length > 0, 'the real file served');
    expect(await updatesOf(base, '10.5555/partial.work')).toEqual([]);
    await waitForLog(d, '"updates.imported"'); // logged once the import process has ended
    expect(events(d, 'updates.imported').map((e) => e.source)).toEqual([join(drop, 'rw.csv')]);
  }, 30_000);

  test('a file that is not update information is logged as failed and changes nothing', async () => {
    const cfg = configWith('[updates]\ndropDir = "updates"');
    const drop = join(dir.path, 'updates');
    const d = daemon(cfg);
    const base = await daemonUrl(d);
    writeFileSync(join(drop, 'rw.csv'), csv([row(70000)]));
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length > 0, 'first file served');
    writeFileSync(join(drop, 'notes.csv'), 'name,value\nfoo,1\n');
    await waitForLog(d, '"updates.source_failed"');
    expect(events(d, 'updates.source_failed')[0]).toMatchObject({
      source: join(drop, 'notes.csv'),
      code: 'RW_MISSING_COLUMN',
    });
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([FRANKEN]);
  }, 30_000);
});

describe('URL sources', () => {
  /** A Retraction Watch CSV over HTTP with validators; records every request it sees. */
  function csvServer(initial: string) {
    const state = { body: initial, etag: '"v1"', lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT', fail: false };
    const seen: { status: number; ifNoneMatch: string | null; ifModifiedSince: string | null }[] = [];
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(req) {
        const ifNoneMatch = req.headers.get('if-none-match');
        const ifModifiedSince = req.headers.get('if-modified-since');
        let res: Response;
        if (state.fail) res = new Response('try later', { status: 503 });
        else if (ifNoneMatch === state.etag) res = new Response(null, { status: 304, headers: { etag: state.etag } });
        else
          res = new Response(state.body, {
            headers: { 'content-type': 'text/csv', etag: state.etag, 'last-modified': state.lastModified },
          });
        seen.push({ status: res.status, ifNoneMatch, ifModifiedSince });
        return res;
      },
    });
    servers.push(server);
    return { state, seen, url: `http://127.0.0.1:${server.port}/retraction_watch.csv` };
  }

  test('fetched on schedule with a conditional GET: 304 keeps the updates, new content replaces them', async () => {
    const src = csvServer(csv([row(70000), row(70264)]));
    const cfg = configWith(
      `[[updates.urls]]\nurl = "${src.url}"\nformat = "retraction-watch-csv"\neveryMinutes = 0.01`,
    );
    const d = daemon(cfg);
    const base = await daemonUrl(d);
    await waitFor(async () => (await updatesOf(base, FRANKEN_DOI)).length > 0, 'the URL source served');
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([FRANKEN]);
    expect(src.seen[0]).toEqual({ status: 200, ifNoneMatch: null, ifModifiedSince: null });

    // the next fetches carry the validators of the first answer and get 304
    await waitFor(() => src.seen.length >= 3, 'two more scheduled fetches');
    for (const s of src.seen.slice(1))
      expect(s).toEqual({ status: 304, ifNoneMatch: '"v1"', ifModifiedSince: 'Mon, 01 Jan 2024 00:00:00 GMT' });
    await waitForLog(d, '"updates.not_modified"');
    expect(events(d, 'updates.imported')).toHaveLength(1);
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([FRANKEN]);
    expect(await updatesOf(base, UNAVAILABLE_DOI)).toEqual([UNAVAILABLE]);

    // an error answer changes nothing
    src.state.fail = true;
    await waitForLog(d, '"updates.source_failed"');
    expect(events(d, 'updates.source_failed')[0]).toMatchObject({ source: src.url, code: 'SOURCE_HTTP_ERROR' });
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([FRANKEN]);

    // new content with a new ETag: imported, the row no longer there is withdrawn
    Object.assign(src.state, {
      fail: false,
      body: csv([row(70264), row(70284)]),
      etag: '"v2"',
      lastModified: 'Tue, 02 Jan 2024 00:00:00 GMT',
    });
    await waitFor(async () => (await updatesOf(base, ASCE_DOI)).length > 0, 'the new content served');
    expect(await updatesOf(base, FRANKEN_DOI)).toEqual([]);
    expect(await updatesOf(base, UNAVAILABLE_DOI)).toEqual([UNAVAILABLE]);
    const v2 = src.seen.findIndex((s) => s.status === 200 && s.ifNoneMatch === '"v1"');
    expect(v2).toBeGreaterThan(0);
    // and the fetch after that one asks with the new validators
    await waitFor(() => src.seen.slice(v2 + 1).find((s) => s.status === 304), 'a conditional GET with the new ETag');
    expect(src.seen.slice(v2 + 1).find((s) => s.status === 304)).toEqual({
      status: 304,
      ifNoneMatch: '"v2"',
      ifModifiedSince: 'Tue, 02 Jan 2024 00:00:00 GMT',
    });
  }, 30_000);
  test('what a URL last did is kept in the store: /metrics and --stats give its last success and import, a restart keeps them', async () => {
    const src = csvServer(csv([row(70000), row(70264)]));
    const cfg = configWith(`[[updates.urls]]\nurl = "${src.url}"\nformat = "retraction-watch-csv"\neveryMinutes = 60`);
    const label = `{source="${src.url}"}`;
    const first = daemon(cfg);
    const base1 = await daemonUrl(first);
    const imported = await waitFor(async () => {
      const m = await metrics(base1);
      return m.get(`doi_holdings_update_source_last_import_works${label}`)! > 0 && m;
    }, 'the import counted');
    expect(imported.get(`doi_holdings_update_source_last_import_rows${label}`)).toBe(2);
    expect(imported.get(`doi_holdings_update_source_last_import_works${label}`)).toBe(2);
    expect(imported.get(`doi_holdings_update_source_last_failure_timestamp_seconds${label}`)).toBe(0);
    const succeededAt = imported.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)!;
    expect(succeededAt).toBeGreaterThan(0);
    expect(await first.stop()).toBe(0);
    daemons = [];

    // restarted while the source fails: the last success and import are still known, and the failure is told
    src.state.fail = true;
    const second = daemon(cfg);
    const base2 = await daemonUrl(second);
    await waitForLog(second, '"updates.source_failed"');
    const m = await waitFor(async () => {
      const now = await metrics(base2);
      return now.get(`doi_holdings_update_source_last_failure_timestamp_seconds${label}`)! > 0 && now;
    }, 'the failure counted');
    expect(m.get(`doi_holdings_update_source_last_success_timestamp_seconds${label}`)).toBe(succeededAt);
    expect(m.get(`doi_holdings_update_source_last_import_rows${label}`)).toBe(2);
    const h = await healthz(base2);
    expect(h.body.updateSources[src.url]).toMatchObject({
      lastSuccessAt: new Date(succeededAt * 1000).toISOString(),
      lastError: 'SOURCE_HTTP_ERROR',
    });
    expect(h.body.updateSources[src.url].lastFailureAt).not.toBeNull();
    expect(await second.stop()).toBe(0);
    daemons = [];

    const stats = (await runCli(['--stats', '--config', cfg.path])).lines.map(
      (l) => JSON.parse(l) as Record<string, any>,
    );
    const production = stats.find((s) => s.env === 'production')!;
    expect(production.urls[src.url]).toMatchObject({
      lastSuccessAt: new Date(succeededAt * 1000).toISOString(),
      lastError: { code: 'SOURCE_HTTP_ERROR' },
      last: { rows: 2, used: 2, works: 2 },
    });
    expect(production.urls[src.url].lastFailureAt).not.toBeNull();
  }, 30_000);
});
