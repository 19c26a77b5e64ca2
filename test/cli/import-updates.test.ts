import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
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
import {
  csv,
  FRANKEN,
  FRANKEN_DOI,
  HEADER,
  ROWS,
  row,
  SAMPLE_PATH,
  UNAVAILABLE,
  UNAVAILABLE_DOI,
} from '../support/rw-sample.ts';
import { IMPORT_FIGURES } from '../support/update-imports.ts';

/**
 * `--import-updates PATH|URL` run as the real program (docs/design.md, "Update information"; README, "Importing update information"): its report and exit code, and
 * what the Updates API of a daemon answers afterwards (--dump shows holdings only, so the daemon is the surface
 * that shows update information).
 */

const HINDAWI_DOI = '10.1155/2021/8425206'; // record 70001
const BMC_DOI = '10.1186/s13046-018-0993-y'; // record 70002

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let daemons: { stop(): Promise<number> }[] = [];
let servers: { stop(force?: boolean): unknown }[] = [];

beforeEach(() => {
  dir = tempDir('doi-holdings-import-updates-');
  cfg = writeConfig(dir.path);
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  for (const s of servers) s.stop(true);
  servers = [];
  dir.remove();
});

function file(name: string, text: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

const importUpdates = (source: string, ...extra: string[]) =>
  runCli(['--import-updates', source, '--config', cfg.path, ...extra]);

function summaryOf(stdout: string): Record<string, any> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

/** A daemon on the same config; returns its base URL (from the `daemon.started` log line). */
async function serve(): Promise<string> {
  const d = startDaemon(cfg.path);
  daemons.push(d);
  await waitForLog(d, '"daemon.started"');
  const started = d
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event: string; url?: string })
    .find((l) => l.event === 'daemon.started');
  return started!.url!.replace(/\/$/, '');
}

async function updatesOf(base: string, dois: string[], path = '/v2.2/updates'): Promise<Record<string, unknown>[][]> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: JSON.stringify({ dois }),
  });
  expect(res.status).toBe(200);
  const { documents } = (await res.json()) as {
    documents: { doi: string; statusCode: number; updates: Record<string, unknown>[] }[];
  };
  expect(documents.map((d) => [d.doi, d.statusCode])).toEqual(dois.map((d) => [d, 200]));
  return documents.map((d) => d.updates);
}

describe('--import-updates PATH', () => {
  test('a clean file: exit 0, a one-line JSON report, and every environment serves the updates', async () => {
    const path = file('rw.csv', csv([row(70000), row(70264)]));
    const r = await importUpdates(path);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = summaryOf(r.stdout);
    expect(report).toMatchObject({
      source: path,
      format: 'retraction-watch-csv',
      rows: 2,
      used: 2,
      works: 2,
      skipped: {},
      firstSkipped: [],
    });
    // the names of the daemon's updates.imported line (test/daemon/updates.test.ts)
    expect(Object.keys(report)).toEqual(IMPORT_FIGURES);
    expect(report.ms).toBeNumber();
    const added = { worksTouched: 2, updatesAdded: 2, updatesChanged: 0, updatesWithdrawn: 0, updatesUnchanged: 0 };
    expect(report.applied).toEqual({ production: added, staging: added });
    expect(await runCli(['--dump', '--config', cfg.path])).toMatchObject({ code: 0, stdout: '' }); // updates are not holdings

    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI, UNAVAILABLE_DOI, '10.5555/absent'])).toEqual([
      [FRANKEN],
      [UNAVAILABLE],
      [],
    ]);
    expect(await updatesOf(base, [FRANKEN_DOI, UNAVAILABLE_DOI, '10.5555/absent'], '/staging/v2.1/updates')).toEqual([
      [FRANKEN],
      [UNAVAILABLE],
      [],
    ]);
  }, 20_000);

  test('the real 3,000-row sample imports cleanly; importing it again changes nothing', async () => {
    const first = await importUpdates(SAMPLE_PATH);
    expect(first.code).toBe(0);
    const report = summaryOf(first.stdout);
    expect(report).toMatchObject({ rows: 3000, used: 3000, skipped: {} });
    expect(report.applied.production.updatesAdded).toBeGreaterThan(2900);
    const again = await importUpdates(SAMPLE_PATH);
    expect(again.code).toBe(0);
    const second = summaryOf(again.stdout);
    expect(second.applied.production).toEqual({
      worksTouched: 0,
      updatesAdded: 0,
      updatesChanged: 0,
      updatesWithdrawn: 0,
      updatesUnchanged: report.applied.production.updatesAdded,
    });
  }, 20_000);

  test('a CSV that would withdraw more than half of the feed is refused (exit 1, nothing changed) unless --allow-shrink', async () => {
    expect((await importUpdates(SAMPLE_PATH)).code).toBe(0);
    const cut = file('cut.csv', csv(ROWS.slice(0, 1000)));
    const refused = await importUpdates(cut);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SNAPSHOT_SHRINK');
    expect(refused.stderr).toContain('--allow-shrink');
    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI, UNAVAILABLE_DOI])).toEqual([[FRANKEN], [UNAVAILABLE]]);
    const allowed = await importUpdates(cut, '--allow-shrink');
    expect(allowed.code).toBe(0);
    expect(summaryOf(allowed.stdout).applied.production.updatesWithdrawn).toBeGreaterThan(1900);
  }, 20_000);

  test('rows that cannot be used are counted by reason with their lines, exit 1; the usable rows are still applied', async () => {
    const noDoi = row(70001).replace(`,${HINDAWI_DOI},`, ',,');
    const unavailableDoi = row(70002).replace(`,${BMC_DOI},`, ',unavailable,');
    const badDate = row(70264).replace(',2/25/2019 0:00,', ',someday,');
    // the edits took
    expect(noDoi).not.toBe(row(70001));
    expect(unavailableDoi).not.toBe(row(70002));
    expect(badDate).not.toBe(row(70264));
    const path = file('mixed.csv', csv([row(70000), noDoi, unavailableDoi, badDate, '70999,short,row']));
    const r = await importUpdates(path);
    expect(r.code).toBe(1);
    const report = summaryOf(r.stdout);
    expect(report).toMatchObject({
      rows: 5,
      used: 1,
      works: 1,
      skipped: { NO_ORIGINAL_DOI: 2, BAD_DATE: 1, SHORT_ROW: 1 },
    });
    expect(report.firstSkipped.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([
      [3, 'NO_ORIGINAL_DOI'],
      [4, 'NO_ORIGINAL_DOI'],
      [5, 'BAD_DATE'],
      [6, 'SHORT_ROW'],
    ]);
    expect(report.firstSkipped[2].message).toContain('someday');

    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI, HINDAWI_DOI, BMC_DOI, UNAVAILABLE_DOI])).toEqual([
      [FRANKEN],
      [],
      [],
      [],
    ]);
  }, 20_000);

  test('an import while the daemon runs is served at once; a later file without a row withdraws its update', async () => {
    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI])).toEqual([[]]);
    expect((await importUpdates(file('v1.csv', csv([row(70000), row(70264)])))).code).toBe(0);
    await waitFor(
      async () => (await updatesOf(base, [FRANKEN_DOI]))[0]!.length > 0,
      'the CLI import served by the daemon',
    );
    expect(await updatesOf(base, [FRANKEN_DOI, UNAVAILABLE_DOI])).toEqual([[FRANKEN], [UNAVAILABLE]]);

    const r = await importUpdates(file('v2.csv', csv([row(70264)])));
    expect(r.code).toBe(0);
    expect(summaryOf(r.stdout).applied.production).toMatchObject({
      updatesWithdrawn: 1,
      updatesAdded: 0,
      updatesUnchanged: 1,
    });
    await waitFor(async () => (await updatesOf(base, [FRANKEN_DOI]))[0]!.length === 0, 'the withdrawn update gone');
    expect(await updatesOf(base, [UNAVAILABLE_DOI], '/staging/v2.2/updates')).toEqual([[UNAVAILABLE]]);
  }, 20_000);

  test('Crossref works JSON and the Retraction Watch CSV are separate feeds: a new CSV does not remove Crossref updates', async () => {
    const works = [
      {
        DOI: '10.5555/notice.1',
        'update-to': [
          {
            DOI: FRANKEN_DOI.toUpperCase(),
            type: 'Correction',
            source: 'publisher',
            updated: { 'date-parts': [[2014, 6]] },
          },
        ],
      },
    ];
    const json = await importUpdates(file('works.json', JSON.stringify(works)));
    expect(json.code).toBe(0);
    expect(summaryOf(json.stdout)).toMatchObject({ format: 'crossref-json', rows: 1, used: 1 });
    expect((await importUpdates(file('rw.csv', csv([row(70000)])))).code).toBe(0);
    expect((await importUpdates(file('rw2.csv', csv([row(70264)])))).code).toBe(0);
    const base = await serve();
    const correction = {
      updateDoi: '10.5555/notice.1',
      source: 'crossref',
      updateType: 'correction',
      updateDate: '2014-06',
      reasons: [],
      urls: ['https://doi.org/10.5555/notice.1'],
    };
    expect(await updatesOf(base, [FRANKEN_DOI])).toEqual([[correction]]);
  }, 20_000);

  test('sources that cannot be read: exit 1 with the reason on stderr; usage errors exit 2', async () => {
    const missing = await importUpdates(join(dir.path, 'nope.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('SOURCE_NOT_FOUND');
    const notRw = await importUpdates(file('other.csv', 'name,value\nfoo,1\n'));
    expect(notRw.code).toBe(1);
    expect(notRw.stderr).toContain('RW_MISSING_COLUMN');
    expect(notRw.stderr).toContain('OriginalPaperDOI');
    expect(notRw.stdout).toBe('');
    const noPath = await runCli(['--import-updates', '--config', cfg.path]);
    expect(noPath.code).toBe(2);
    const badFormat = await importUpdates(file('rw.csv', csv([row(70000)])), '--format', 'xml');
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('--format');
  }, 20_000);
});

describe('--import-updates URL', () => {
  test('a gzipped CSV and an extension-less JSON URL are imported; an HTTP error exits 1', async () => {
    const works = {
      message: {
        items: [
          {
            DOI: '10.5555/Work.X',
            'updated-by': [
              { DOI: '10.5555/eoc.x', type: 'expression_of_concern', updated: { 'date-parts': [[2019, 5, 6]] } },
            ],
          },
        ],
      },
    };
    const requests: string[] = [];
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        requests.push(path);
        if (path === '/rw.csv.gz')
          return new Response(Bun.gzipSync(Buffer.from(csv([row(70000), row(70264)]))), {
            headers: { 'content-type': 'application/gzip' },
          });
        if (path === '/works') return Response.json(works);
        return new Response('no such thing', { status: 404 });
      },
    });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;

    const gz = await importUpdates(`${base}/rw.csv.gz`);
    expect(gz.code).toBe(0);
    expect(summaryOf(gz.stdout)).toMatchObject({ format: 'retraction-watch-csv', rows: 2, used: 2, skipped: {} });
    const json = await importUpdates(`${base}/works`);
    expect(json.code).toBe(0);
    expect(summaryOf(json.stdout)).toMatchObject({ format: 'crossref-json', rows: 1, used: 1 });
    const missing = await importUpdates(`${base}/gone.csv`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('SOURCE_HTTP_ERROR');
    expect(missing.stderr).toContain('404');
    expect(requests).toEqual(['/rw.csv.gz', '/works', '/gone.csv']);

    const daemonUrl = await serve();
    expect(await updatesOf(daemonUrl, [FRANKEN_DOI, UNAVAILABLE_DOI, '10.5555/work.x'])).toEqual([
      [FRANKEN],
      [UNAVAILABLE],
      [
        {
          updateDoi: '10.5555/eoc.x',
          source: 'crossref',
          updateType: 'expression_of_concern',
          updateDate: '2019-05-06',
          reasons: [],
          urls: ['https://doi.org/10.5555/eoc.x'],
        },
      ],
    ]);
  }, 20_000);

  test('a download cut off part-way exits 1 and applies nothing (a truncated snapshot withdraws nothing)', async () => {
    expect((await importUpdates(file('rw.csv', csv([row(70000), row(70264)])))).code).toBe(0);
    // a raw HTTP answer that promises more bytes than it sends, then closes the connection
    const partial = Buffer.from(`${HEADER}\n${row(70264)}\n`);
    const server = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket) {
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: text/csv\r\ncontent-length: ${partial.length * 10}\r\nconnection: close\r\n\r\n`,
          );
          socket.write(partial);
          setTimeout(() => socket.end(), 50);
        },
      },
    });
    servers.push(server);
    const r = await importUpdates(`http://127.0.0.1:${server.port}/rw.csv`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('SOURCE_READ_FAILED');
    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI, UNAVAILABLE_DOI])).toEqual([[FRANKEN], [UNAVAILABLE]]);
    expect(await updatesOf(base, [FRANKEN_DOI], '/staging/v2.2/updates')).toEqual([[FRANKEN]]);
  }, 20_000);

  test('an unreachable URL exits 1 and leaves the stored updates alone', async () => {
    expect((await importUpdates(file('rw.csv', csv([row(70000)])))).code).toBe(0);
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const port = server.port;
    server.stop(true);
    const r = await importUpdates(`http://127.0.0.1:${port}/rw.csv`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SOURCE_UNREACHABLE');
    const base = await serve();
    expect(await updatesOf(base, [FRANKEN_DOI])).toEqual([[FRANKEN]]);
  }, 20_000);
});
