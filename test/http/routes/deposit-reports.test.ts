import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { fault } from '../../../src/base/index.ts';
import type { PlatformSettings } from '../../../src/config/index.ts';
import { type App, ReportKeys } from '../../../src/http/index.ts';
import { DepositReport, DepositReportPage } from '../../../src/http/openapi/index.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { BASE, makeApp, platformsWithoutApi } from '../http-support.ts';

/**
 * GET /v2.2/platforms/{name}/deposits[/{file}] (and under /staging/): a platform's deposit reports with its own
 * key, over real LMDB stores, through the app. acme and beta have keys; gamma has none.
 */

const ACME_KEY = 'acme-report-key-0001';
const BETA_KEY = 'beta-report-key-0002';
const T0 = Date.UTC(2026, 0, 5, 9, 30);
/** the replies are what /openapi.json says they are */
const checkPage = TypeCompiler.Compile(DepositReportPage);
const checkReport = TypeCompiler.Compile(DepositReport);
const XSS_DOI = '<script>alert(1)</script>';

let dir: ReturnType<typeof tempDir>;
let production: Store;
let staging: Store;
let app: App;
/** acme's production files, oldest first */
const acme: string[] = [];
let beta: string;
let acmeStaging: string;
let quarantined: string;

function apply(store: Store, lines: object[], platform: string, time: number): string {
  const f = { ...preparedFile(lines, { platform, time }), inOrderGiven: true };
  const [status] = store.applyFilesSync([f]);
  if (status?.status !== 'applied') throw new Error(`deposit not applied: ${status?.status}`);
  return f.key;
}

const nameOf = (key: string) => key.slice(key.indexOf('/') + 1);
const json = (r: Response): Promise<any> => r.json();

function get(path: string, key: string | null, headers: Record<string, string> = {}, method = 'GET') {
  return app.handle(
    new Request(`${BASE}${path}`, { method, headers: { ...(key === null ? {} : { 'x-api-key': key }), ...headers } }),
  );
}

beforeAll(async () => {
  dir = tempDir();
  production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 26 });
  acme.push(apply(production, [{ doi: '10.5555/a1' }, { doi: XSS_DOI }], 'acme', T0));
  acme.push(apply(production, [{ doi: '10.5555/a2', accessType: 'open' }], 'acme', T0 + 2000));
  // over a thousand rejected lines: the ledger keeps the first 1,000 and counts them all
  acme.push(
    apply(
      production,
      [{ doi: '10.5555/a3' }, ...Array.from({ length: 1005 }, () => ({ doi: 'junk' }))],
      'acme',
      T0 + 4000,
    ),
  );
  beta = apply(production, [{ doi: '10.5555/b1' }], 'beta', T0 + 1000);
  const q = preparedFile([], { platform: 'acme', time: T0 + 3000 });
  quarantined = q.key;
  await production.quarantineFile(
    { key: q.key, platform: 'acme', size: 3, hash: 'bad', lastModified: T0 + 3000 },
    fault('NOT_GZIP', `${q.key}: not gzip`),
    { tries: 1 },
  );
  acmeStaging = apply(staging, [{ doi: '10.5555/s1' }], 'acme', T0);
  const platforms: PlatformSettings[] = platformsWithoutApi('acme', 'beta', 'gamma').map((p) =>
    p.name === 'acme' ? { ...p, reportKey: ACME_KEY } : p.name === 'beta' ? { ...p, reportKey: BETA_KEY } : p,
  );
  app = makeApp(
    { production: { store: production }, staging: { store: staging } },
    { reportKeys: new ReportKeys(platforms) },
  );
});

afterAll(async () => {
  await production.close();
  await staging.close();
  dir.remove();
});

describe('isolation: a platform key reads its own reports only', () => {
  const envs = [
    { prefix: '', own: () => acme[0]! },
    { prefix: '/staging', own: () => acmeStaging },
  ];
  /** every route shape, as JSON and as HTML, GET and HEAD */
  const shapes = (file: string): { path: string; headers: Record<string, string> }[] => [
    { path: 'deposits', headers: {} },
    { path: `deposits/${nameOf(file)}`, headers: {} },
    { path: 'deposits?format=html', headers: {} },
    { path: `deposits/${nameOf(file)}`, headers: { accept: 'text/html' } },
    { path: 'deposits?limit=1', headers: {} },
  ];

  for (const { prefix, own } of envs) {
    test(`${prefix || 'production'}: another platform's key gets 404 on every route, as for an unknown platform, and nothing of it`, async () => {
      for (const shape of shapes(own())) {
        for (const method of ['GET', 'HEAD']) {
          const path = `${prefix}/v2.2/platforms/acme/${shape.path}`;
          const mine = await get(path, ACME_KEY, shape.headers, method);
          expect(mine.status).toBe(200);
          const other = await get(path, BETA_KEY, shape.headers, method);
          expect(other.status).toBe(404);
          const body = await other.text();
          if (method === 'GET') {
            expect(JSON.parse(body)).toEqual({
              statusCode: 404,
              error: 'NOT_FOUND',
              message: 'no platform "acme" for this key',
            });
            expect(body).not.toContain(nameOf(own()));
          }
          // a platform whose name exists but has no key, and one that does not exist, answer alike
          for (const name of ['gamma', 'nobody']) {
            const r = await get(`${prefix}/v2.2/platforms/${name}/${shape.path}`, ACME_KEY, shape.headers, method);
            expect(r.status).toBe(404);
          }
        }
      }
    });

    test(`${prefix || 'production'}: a missing or unknown key is 401, on every route`, async () => {
      for (const shape of shapes(own())) {
        const path = `${prefix}/v2.2/platforms/acme/${shape.path}`;
        const none = await get(path, null, shape.headers);
        expect(none.status).toBe(401);
        expect((await json(none)).message).toBe('the x-api-key header is missing');
        const wrong = await get(path, `${ACME_KEY}x`, shape.headers);
        expect(wrong.status).toBe(401);
        expect((await json(wrong)).message).toBe('the key is not known');
        // an integrator's key or another environment's route gives no way round it
        expect((await get(path, 'key-with-updates-0001', shape.headers)).status).toBe(401);
      }
    });
  }

  test("a key reads each environment's own ledger: staging's file is not in production's", async () => {
    const r = await get(`/v2.2/platforms/acme/deposits/${nameOf(acmeStaging)}`, ACME_KEY);
    expect(r.status).toBe(404);
    const s = await get(`/staging/v2.2/platforms/acme/deposits/${nameOf(acmeStaging)}`, ACME_KEY);
    expect((await json(s)).env).toBe('staging');
  });

  test("beta's key reads beta's files, and none of acme's", async () => {
    const r = await get('/v2.2/platforms/beta/deposits', BETA_KEY);
    const body = await json(r);
    expect(body.deposits.map((d: { key: string }) => d.key)).toEqual([beta]);
    // acme's file under beta's name is not found: the key decides the platform, not the path alone
    expect((await get(`/v2.2/platforms/beta/deposits/${nameOf(acme[0]!)}`, BETA_KEY)).status).toBe(404);
  });

  test('a browser asking for HTML without a key is asked for it (Basic), and the Basic password is the key', async () => {
    const r = await get('/v2.2/platforms/acme/deposits', null, { accept: 'text/html' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain('Basic realm="deposit reports"');
    const basic = `Basic ${Buffer.from(`anyone:${ACME_KEY}`).toString('base64')}`;
    const ok = await get('/v2.2/platforms/acme/deposits', null, { accept: 'text/html', authorization: basic });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const other = `Basic ${Buffer.from(`acme:${BETA_KEY}`).toString('base64')}`;
    expect((await get('/v2.2/platforms/acme/deposits', null, { authorization: other })).status).toBe(404);
  });
});

describe('the list: newest first, paged', () => {
  test("a platform's files newest first (LastModified), quarantined ones among them, with their reports", async () => {
    const r = await get('/v2.2/platforms/acme/deposits', ACME_KEY);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('private, no-cache');
    const body = await json(r);
    expect([...checkPage.Errors(body)]).toEqual([]);
    expect(body.platform).toBe('acme');
    expect(body.env).toBe('production');
    expect(body.deposits.map((d: { key: string }) => d.key)).toEqual([acme[2], quarantined, acme[1], acme[0]]);
    expect(body.next).toBeUndefined();
    const [newest, q] = body.deposits;
    expect(newest).toMatchObject({
      outcome: 'applied',
      lastModified: new Date(T0 + 4000).toISOString(),
      counts: { records: 1006, rejected: 1005 },
      rejectedNotListed: 5,
    });
    expect(newest.rejectedLines).toHaveLength(1000);
    expect(newest.rejectedLines[0]).toEqual({
      line: 2,
      path: '/doi',
      code: 'INVALID_DOI',
      message: expect.stringContaining('not a DOI'),
    });
    expect(newest.recordedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(q).toMatchObject({ outcome: 'quarantined', code: 'NOT_GZIP' });
    expect(newest.readFrom).toBeUndefined();
  });

  test('after and limit page through, the pages making up the whole list', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 4; i++) {
      const r = await get(
        `/v2.2/platforms/acme/deposits?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`,
        ACME_KEY,
      );
      const body = await json(r);
      seen.push(...body.deposits.map((d: { key: string }) => d.key));
      after = body.next;
    }
    expect(seen).toEqual([acme[2], quarantined, acme[1], acme[0]]);
    expect(after).toBeUndefined();
    const two = await json(await get('/v2.2/platforms/acme/deposits?limit=2', ACME_KEY));
    expect(two.next).toBe(nameOf(quarantined));
  });

  test('a bad cursor, limit or parameter is a 400 saying which', async () => {
    const bad = async (query: string) => {
      const r = await get(`/v2.2/platforms/acme/deposits?${query}`, ACME_KEY);
      expect(r.status).toBe(400);
      return (await json(r)).message as string;
    };
    expect(await bad('after=nope.jsonl.gz')).toContain('is not a file of acme in the production ledger');
    // beta's file is no cursor for acme, and says nothing more than an unknown one
    expect(await bad(`after=${nameOf(beta)}`)).toContain('is not a file of acme');
    expect(await bad('limit=0')).toBe('limit must be a whole number from 1 to 100 (got "0")');
    expect(await bad('limit=101')).toContain('from 1 to 100');
    expect(await bad('limit=x')).toContain('(got "x")');
    expect(await bad('cursor=1')).toBe('unknown query parameter "cursor"; this route takes after and limit');
    expect(await bad('format=xml')).toContain('format must be json or html');
  });

  test('the key is checked first: without it a bad format is a 401 too, as docs/interface.md says', async () => {
    const r = await get('/v2.2/platforms/acme/deposits?format=xml', null);
    expect(r.status).toBe(401);
    expect((await get('/v2.2/platforms/acme/deposits?format=xml', `${ACME_KEY}x`)).status).toBe(401);
  });
});

describe('one file', () => {
  test('its report; an unknown file is 404', async () => {
    const r = await get(`/v2.2/platforms/acme/deposits/${nameOf(acme[0]!)}`, ACME_KEY);
    const body = await json(r);
    expect([...checkReport.Errors(body)]).toEqual([]);
    expect(body).toMatchObject({ env: 'production', key: acme[0], outcome: 'applied', counts: { rejected: 1 } });
    expect(body.rejectedLines).toEqual([
      { line: 2, path: '/doi', code: 'INVALID_DOI', message: expect.stringContaining('<script>') },
    ]);
    const none = await get('/v2.2/platforms/acme/deposits/00000000-0000-4000-8000-999999999999.jsonl.gz', ACME_KEY);
    expect(none.status).toBe(404);
    expect((await json(none)).message).toContain('is not in the production ledger');
  });

  test('the HTML view escapes what the publisher wrote, and links each file', async () => {
    const r = await get(`/v2.2/platforms/acme/deposits/${nameOf(acme[0]!)}`, ACME_KEY, { accept: 'text/html' });
    const page = await r.text();
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('INVALID_DOI');
    const list = await (await get('/v2.2/platforms/acme/deposits?format=html&limit=2', ACME_KEY)).text();
    expect(list).toContain(`<a href="/v2.2/platforms/acme/deposits/${nameOf(acme[2]!)}">`);
    expect(list).toContain(
      `<a href="/v2.2/platforms/acme/deposits?format=html&amp;limit=2&amp;after=${nameOf(quarantined)}">`,
    );
    const big = await (await get(`/v2.2/platforms/acme/deposits/${nameOf(acme[2]!)}?format=html`, ACME_KEY)).text();
    expect(big).toContain('Rejected lines (the first 1000 of 1005)');
  });

  test("the links are this site's own paths: no Host (a proxy's inside name, a client's odd one) is trusted", async () => {
    // behind a TLS-terminating proxy the request's own address is http://<inside host>; a client sets Host; an
    // address with a user name is no HttpUrl at all (it once made the page a 500)
    for (const origin of ['http://internal.example:8080', 'http://evil.example', 'http://user:pw@odd.example']) {
      for (const prefix of ['', '/staging']) {
        const r = await app.handle(
          new Request(`${origin}${prefix}/v2.2/platforms/acme/deposits?format=html&limit=1`, {
            headers: { 'x-api-key': ACME_KEY },
          }),
        );
        expect(r.status).toBe(200);
        const page = await r.text();
        expect(page).not.toContain('.example');
        const file = prefix === '' ? acme[2]! : acmeStaging;
        expect(page).toContain(`<a href="${prefix}/v2.2/platforms/acme/deposits/${nameOf(file)}">`);
        if (prefix === '')
          expect(page).toContain(
            `<a href="/v2.2/platforms/acme/deposits?format=html&amp;limit=1&amp;after=${nameOf(file)}">`,
          );
      }
    }
  });

  test('a method other than GET or HEAD is 405', async () => {
    const r = await get('/v2.2/platforms/acme/deposits', ACME_KEY, {}, 'POST');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD');
  });
});
