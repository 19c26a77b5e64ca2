import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CONSOLE_CSP, renderOverview } from '../../src/console/index.ts';
import { createConsoleApp, startServer } from '../../src/http/index.ts';
import { KEY, makeApp } from '../http/http-support.ts';
import { preparedFile } from '../support/prepared-file.ts';
import { countedFromHoldings } from '../support/random-deposits.ts';
import {
  type ConsoleFixture,
  consoleFixture,
  fixtureConsole,
  HOSTILE_KEY,
  HOSTILE_MESSAGE,
  NOW,
  REJECTED_DOI,
} from './console-fixture.ts';

/**
 * The operator console over HTTP (docs/operations.md, "Operator console"): real servers on loopback over real
 * stores. Never on the public listener without its key; on the operator's own listener; what each section shows;
 * every value escaped; the page's CSP.
 */

const CONSOLE_KEY = 'console-key-0123456789abcdef';
let f: ConsoleFixture;
type Server = ReturnType<typeof startServer>;
let publicWithout: Server;
let publicWithKey: Server;
let admin: Server;
let adminWithKey: Server;

beforeAll(async () => {
  f = await consoleFixture();
  const envs = { production: { store: f.production }, staging: { store: f.staging } };
  publicWithout = startServer(makeApp(envs, { entitlements: f.entitlements }), '127.0.0.1', 0);
  publicWithKey = startServer(
    makeApp(envs, { entitlements: f.entitlements, console: { view: fixtureConsole(f), key: CONSOLE_KEY } }),
    '127.0.0.1',
    0,
  );
  admin = startServer(createConsoleApp(fixtureConsole(f)), '127.0.0.1', 0);
  adminWithKey = startServer(createConsoleApp(fixtureConsole(f), CONSOLE_KEY), '127.0.0.1', 0);
  // one real call to the platform's Entitlement API, through the public listener
  const r = await fetch(`${publicWithout.url}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ org: { ipv4: '192.0.2.10' }, dois: ['10.5555/paid-1'] }),
  });
  expect(r.status).toBe(200);
  expect(f.platform.calls.length).toBe(1);
});
afterAll(async () => {
  for (const s of [publicWithout, publicWithKey, admin, adminWithKey]) await s?.stop();
  await f?.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const basic = (user: string, key: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`,
});

async function page(server: Server, path: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${server.url}${path}`, { headers });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

describe('where the console is served', () => {
  test('the public listener without a console key has no console: 404', async () => {
    for (const path of ['/console', '/console/production', `/console/production/files/${f.conflictedKey}`]) {
      const r = await page(publicWithout, path, bearer(CONSOLE_KEY));
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.text).not.toContain('console');
    }
  });

  test('the public listener with a key: 401 asking for it without it or with another; the page with it', async () => {
    for (const headers of [{}, bearer('not-the-console-key-0000'), basic('ops', 'wrong'), { authorization: 'Basic' }]) {
      const r = await page(publicWithKey, '/console', headers);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Basic realm="doi-holdings console", charset="UTF-8"');
      expect(JSON.parse(r.text)).toMatchObject({ statusCode: 401, error: 'UNAUTHORIZED' });
      expect(r.text).not.toContain('acme');
    }
    for (const headers of [bearer(CONSOLE_KEY), basic('ops', CONSOLE_KEY), basic('', CONSOLE_KEY)]) {
      const r = await page(publicWithKey, '/console', headers);
      expect(r.status).toBe(200);
      expect(r.text).toContain('<h1>Production</h1>');
    }
    // the API beside it is as it was
    expect((await page(publicWithKey, '/livez')).status).toBe(200);
  });

  test("the operator's listener serves the console, and nothing else; with a key it asks for it", async () => {
    expect((await page(admin, '/console')).status).toBe(200);
    expect((await page(admin, '/console/staging')).status).toBe(200);
    for (const path of ['/metrics', '/v2.2/updates', '/doi/10.5555/a-1', '/'])
      expect({ path, status: (await page(admin, path)).status }).toEqual({ path, status: 404 });
    expect((await page(adminWithKey, '/console')).status).toBe(401);
    expect((await page(adminWithKey, '/console', bearer(CONSOLE_KEY))).status).toBe(200);
  });

  test('only GET and HEAD; HEAD has the length and no body', async () => {
    const post = await fetch(`${admin.url}/console`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const get = await page(admin, '/console');
    const head = await fetch(`${admin.url}/console`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(get.text));
  });
});

describe('the overview', () => {
  test('headers: HTML, the console CSP (no script, only its own style), never kept', async () => {
    const r = await page(admin, '/console');
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toStartWith("default-src 'none'; style-src 'sha256-");
    expect(CONSOLE_CSP).not.toContain('script-src');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.text).not.toMatch(/<script|<link rel="stylesheet"|src="http/i);
    expect(r.text.match(/<style>/g)?.length).toBe(1);
  });

  test('/console is production; /console/staging is staging, with its banner; an unknown one is 404', async () => {
    const production = await page(admin, '/console');
    expect(production.text).toBe((await page(admin, '/console/production')).text);
    const staging = await page(admin, '/console/staging');
    expect(staging.text).toContain('<h1>Staging</h1>');
    expect(staging.text).toContain('Staging: test data');
    expect(staging.text).not.toContain('paid/');
    const unknown = await page(admin, '/console/testing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
  });

  test('live holdings per platform and access type, from the counters, as a full count of the holdings gives them', async () => {
    const { text } = await page(admin, '/console');
    const table = section(text, 'holdings');
    const heads = [...table.matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
    expect(heads).toEqual(['Platform', 'Holdings', 'paid', 'open', 'free', 'permFree', 'none']);
    expect(rows(table)).toEqual([
      ['acme', '3', '2', '1', '0', '0', '0'],
      ['beta', '1', '0', '0', '1', '0', '0'],
      ['paid', '1', '1', '0', '0', '0', '0'],
      ['All platforms', '5', '3', '1', '1', '0', '0'],
    ]);
    const counted = countedFromHoldings(f.production);
    for (const [platform, n, ...byAccess] of rows(table).slice(0, -1)) {
      const c = counted[platform!]!;
      expect([n, ...byAccess].map(Number)).toEqual([
        Object.values(c).reduce((a, b) => a + b),
        c.paid,
        c.open,
        c.free,
        c.permFree,
        c.none,
      ]);
    }
    expect(table).not.toContain('--stats');
  });

  test('while the access counters are not counted (an older program applied files since the start), per platform only, and where to count them', () => {
    const v = fixtureConsole(f).overview('production')!;
    const table = section(renderOverview({ ...v, holdings: { ...v.holdings, byAccess: undefined } }), 'holdings');
    expect(rows(table)).toEqual([
      ['acme', '3'],
      ['beta', '1'],
      ['paid', '1'],
      ['All platforms', '5'],
    ]);
    expect(textOf(table)).toContain(
      '<code>doi-holdings --config /etc/doi-holdings/doi-holdings.toml --stats --env production</code>',
    );
  });

  test('files applied per day: 30 bars, each titled with its day and count, today last', async () => {
    const { text } = await page(admin, '/console');
    const chart = section(text, 'days');
    const titles = [...chart.matchAll(/<rect[^>]*><title>([^<]*)<\/title><\/rect>/g)].map((m) => m[1]);
    expect(titles.length).toBe(30);
    const shown = Object.fromEntries(titles.map((t) => t!.split(': ')).map(([d, n]) => [d, Number.parseInt(n!, 10)]));
    const expected = Object.fromEntries(
      Object.entries(f.perDay).filter(([day]) => day >= new Date(NOW - 29 * 86_400_000).toISOString().slice(0, 10)),
    );
    expect(Object.fromEntries(Object.entries(shown).filter(([, n]) => n > 0))).toEqual(expected);
    expect(titles.at(-1)).toStartWith('2026-11-28: ');
    expect(chart).toContain('4 files applied over the last 30 days (UTC), 1 today.');
  });

  test('the latest files, newest first, with outcome, counts and time, each linking to its report', async () => {
    const { text } = await page(admin, '/console');
    const latest = section(text, 'latest');
    const links = [...latest.matchAll(/<a href="([^"]*)"><code>([^<]*)<\/code><\/a>/g)].map((m) => [m[1], m[2]]);
    expect(links.length).toBe(5);
    expect(links[0]).toEqual([`/console/production/files/${f.rejectedFile.key}`, f.rejectedFile.key]);
    const first = rows(latest)[0]!;
    expect(first.slice(2, 9)).toEqual(['applied', '3', '1', '0', '0', '0', '2']);
  });

  test('quarantined files with their reason and the exact command that retries them; conflicts too', async () => {
    const { text } = await page(admin, '/console');
    const quarantined = section(text, 'quarantined');
    expect(quarantined).toContain('<code>NOT_GZIP</code>');
    expect(quarantined).toContain(
      `<code>doi-holdings --config /etc/doi-holdings/doi-holdings.toml --retry ${escaped(`'${HOSTILE_KEY}'`)}</code>`,
    );
    const conflicts = section(text, 'conflicts');
    expect(conflicts).toContain(f.conflictedKey);
    expect(conflicts).toContain('was already applied with other content');
    expect(conflicts).toContain(`--report --env production ${f.conflictedKey}</code>`);
  });

  test("each platform's Entitlement API: calls, rates, latency from its histogram, breaker; the index", async () => {
    const { text } = await page(admin, '/console');
    const platforms = section(text, 'platforms');
    const [row] = rows(platforms);
    expect(row?.[0]).toBe('paid');
    expect(row?.slice(1, 4)).toEqual(['1', '0.0%', '0.0%']);
    expect(row?.[4]).toMatch(/^\d+(\.\d)? ms$/);
    expect(row?.[6]).toBe('closed');
    expect(platforms).toMatch(/Holdings index: <span class="(good|warn)">(complete|warming)<\/span>/);
  });

  test('the version, and no update source without a daemon following any', async () => {
    const { text } = await page(admin, '/console');
    expect(text).toContain('doi-holdings 9.9.9-test');
    expect(section(text, 'sources')).toContain('No update source is followed');
  });
});

describe('a file report', () => {
  test('outcome, counts and rejected lines with line, field and reason', async () => {
    const r = await page(admin, `/console/production/files/${f.rejectedFile.key}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    const rejected = rows(section(r.text, 'rejected'));
    expect(rejected.map((l) => l.slice(0, 2))).toEqual([
      ['2', '/doi'],
      ['3', '/accessType'],
    ]);
    for (const [i, line] of f.rejectedFile.rejectedLines!.entries())
      expect(rejected[i]?.[2]).toBe(`${line.code}: ${line.message}`);
    expect(r.text).toContain(escaped(REJECTED_DOI.slice(0, 3)));
    expect(rows(section(r.text, 'counts'))).toContainEqual(['Rejected', '2']);
    expect(r.text).toContain('<span class="good">applied</span>');
  });

  test('a quarantined file: its reason and the retry command; a conflicted one: its conflicts', async () => {
    const q = await page(
      admin,
      `/console/production/files/${HOSTILE_KEY.split('/').map(encodeURIComponent).join('/')}`,
    );
    expect(q.status).toBe(200);
    expect(q.text).toContain('<span class="bad">quarantined</span>');
    expect(q.text).toContain(`--retry ${escaped(`'${HOSTILE_KEY}'`)}`);
    const c = await page(admin, `/console/production/files/${f.conflictedKey}`);
    expect(section(c.text, 'conflicts')).toContain('already applied');
  });

  test('a key the ledger does not hold, or in an environment it is not in: 404', async () => {
    expect((await page(admin, '/console/production/files/acme/none.jsonl.gz')).status).toBe(404);
    expect((await page(admin, `/console/staging/files/${f.rejectedFile.key}`)).status).toBe(404);
    expect((await page(admin, '/console/production/files/%E0%A4%A')).status).toBe(404);
    expect((await page(admin, '/console/production/other')).status).toBe(404);
  });
});

test('hostile names and messages are escaped everywhere they show', async () => {
  for (const path of [
    '/console',
    `/console/production/files/${HOSTILE_KEY.split('/').map(encodeURIComponent).join('/')}`,
    `/console/production/files/${f.rejectedFile.key}`,
  ]) {
    const { text } = await page(admin, path);
    expect(text).not.toContain('<script>');
    expect(text).not.toContain('<img');
    expect(text).not.toContain('<b>bold');
    expect(text).not.toContain('<i>not-a-doi');
  }
  const { text } = await page(admin, '/console');
  expect(text).toContain(escaped(HOSTILE_MESSAGE));
  // the link to its report: every segment percent-encoded
  expect(text).toContain(
    `href="/console/production/files/${HOSTILE_KEY.split('/').map(encodeURIComponent).join('/')}"`,
  );
});

/** The text of a section, from its heading (by id) to the next heading. */
function section(page: string, id: string): string {
  const start = page.indexOf(`<h2 id="${id}">`);
  if (start === -1) throw new Error(`no section ${id}`);
  const end = page.indexOf('<h2 ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

/** The cells of a table's body and foot rows as text. */
function rows(html: string): string[][] {
  const body = html.replace(/<thead>[\s\S]*?<\/thead>/, '');
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
    [...r[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => textOf(c[1]!.replace(/<[^>]*>/g, '').trim())),
  );
}

const textOf = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
const escaped = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

test('a file applied after a view is counted at the next, from the files applied since', async () => {
  const before = await page(admin, '/console/staging');
  const today = (text: string) => text.match(/<title>2026-11-28: (\d+) files?<\/title>/)?.[1];
  expect(today(before.text)).toBe('1');
  const file = preparedFile([{ doi: '10.5555/staging-2', accessType: 'free' }], { platform: 'beta' });
  expect(f.staging.applyFilesSync([file], () => new Date(NOW - 1000))[0]?.status).toBe('applied');
  const after = await page(admin, '/console/staging');
  expect(today(after.text)).toBe('2');
  expect(rows(section(after.text, 'latest'))[0]?.[0]).toBe(file.key);
  expect(rows(section(after.text, 'holdings'))).toContainEqual(['beta', '1', '0', '0', '1', '0', '0']);
});
