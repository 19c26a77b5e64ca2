import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Entitlements } from '../../../src/entitlement/index.ts';
import { type App, startServer } from '../../../src/http/index.ts';
import { directRoutesOf } from '../../../src/http/routes/direct-routes.ts';
import { Store } from '../../../src/store/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { BASE, importSample, KEY, makeApp } from '../http-support.ts';

/**
 * The fast path of src/http/routes/direct-routes.ts: Bun's router calls the API routes' handlers without Elysia. Held
 * to the general path (app.handle, through Elysia): the same request gets the same status, headers and body
 * both ways, a handler that throws (or whose promise rejects) gets the same 500, and another method still gets
 * Elysia's 405.
 */

let dir: ReturnType<typeof tempDir>;
let store: Store;
let app: App;
let server: ReturnType<typeof startServer>;
let throwing: App;
let throwingServer: ReturnType<typeof startServer>;
const OPEN_DOI = '10.5555/direct.1';

beforeAll(async () => {
  dir = tempDir('direct-routes');
  store = Store.open(join(dir.path, 'db'), 'production', { mapSizeBytes: 256 * 1024 ** 2 });
  store.applyFilesSync([
    preparedFile([
      {
        doi: OPEN_DOI,
        accessType: 'open',
        vor: [{ url: 'https://acme.example/1.pdf', contentType: 'application/pdf' }],
      },
    ]),
  ]);
  await importSample([store]);
  app = makeApp({ production: { store } });
  server = startServer(app, '127.0.0.1', 0);
  throwing = makeApp(
    { production: { store } },
    {
      health: () => {
        throw new Error('the health check broke');
      },
      // an entitlement service that fails after the body is read: the handler's promise rejects
      entitlements: {
        forStore: () => ({
          refresh: () => {
            throw new Error('the index broke');
          },
        }),
      } as unknown as Entitlements,
    },
  );
  throwingServer = startServer(throwing, '127.0.0.1', 0);
  // the entitlement index is read in the background: wait until the open DOI is answered from it
  for (let i = 0; i < 200; i++) {
    const r = await app.handle(entitlementRequest(BASE));
    if ((await r.text()).includes('"oa_platform"')) break;
    await Bun.sleep(50);
  }
});
afterAll(async () => {
  await server.stop();
  await throwingServer.stop();
  store.close();
  dir.remove();
});

function entitlementRequest(base: string): Request {
  return new Request(`${base}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: [OPEN_DOI, '10.5555/nobody.1', 'not a doi'] }),
  });
}

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function seen(r: Response): Promise<Seen> {
  const headers: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    // set by the socket layer, not by the handler
    if (!['date', 'content-length', 'connection', 'keep-alive'].includes(k)) headers[k] = v;
  });
  return { status: r.status, headers, body: await r.text() };
}

/** The same request through Elysia (app.handle) and over the port (Bun's router, the direct handlers). */
async function bothWays(a: App, url: string, make: (base: string) => Request): Promise<[Seen, Seen]> {
  const viaElysia = await seen(await a.handle(make(BASE)));
  const direct = await seen(await fetch(make(url)));
  return [viaElysia, direct];
}

describe('direct routes answer as the Elysia app does', () => {
  test('every static GET and POST route of the app has a direct handler', () => {
    const table = directRoutesOf(app)!.table();
    const fromElysia = app.routes
      .filter((r) => (r.method === 'GET' || r.method === 'POST') && !r.path.endsWith('*'))
      .map((r) => `${r.method} ${r.path}`);
    const direct = Object.entries(table).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`));
    expect(direct.sort()).toEqual(fromElysia.sort());
    expect(direct).toContain('POST /v2.2/entitlements');
    expect(direct).toContain('GET /staging/v2.2/updates/changes');
  });

  test('the Entitlement API, the Updates API and the change feed: same status, headers and body', async () => {
    // identity: fetch would otherwise ask for gzip and unpack it, app.handle not
    const get =
      (path: string, key: string | null = KEY) =>
      (base: string) =>
        new Request(`${base}${path}`, {
          headers: { 'accept-encoding': 'identity', ...(key ? { 'x-api-key': key } : {}) },
        });
    const cases: ((base: string) => Request)[] = [
      entitlementRequest,
      (base) =>
        new Request(`${base}/v2.1/updates`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ dois: ['10.3892/ijo.2017.3871', 'nope'] }),
        }),
      (base) =>
        new Request(`${base}/v2.2/updates`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'text/plain' },
          body: '{}',
        }),
      (base) =>
        new Request(`${base}/v2.2/updates`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'content-encoding': 'br' },
          body: '{}',
        }),
      get('/v2.2/updates/changes?limit=2'),
      get('/v2.2/updates/changes?limit=0'),
      get('/v2.2/updates/changes?after=nonsense'),
      get('/v2.2/updates/changes', null),
      get('/staging/v2.2/updates/changes'),
      get('/v2.2/updates/prefixes'),
      get('/openapi.json'),
      get('/healthz'),
      get('/livez'),
      get('/readyz'),
    ];
    const statuses: number[] = [];
    for (const make of cases) {
      const [viaElysia, direct] = await bothWays(app, server.url, make);
      expect(direct).toEqual(viaElysia);
      statuses.push(direct.status);
    }
    expect(statuses).toEqual([200, 200, 415, 415, 200, 400, 400, 401, 404, 200, 200, 200, 200, 200]);
    // the empty poll's fast path too: the cursor of the last change, from a page that said more: false
    let page = (await (
      await fetch(`${server.url}/v2.2/updates/changes?limit=1000`, { headers: { 'x-api-key': KEY } })
    ).json()) as { next: string; more: boolean };
    while (page.more)
      page = (await (
        await fetch(`${server.url}/v2.2/updates/changes?limit=1000&after=${page.next}`, {
          headers: { 'x-api-key': KEY },
        })
      ).json()) as typeof page;
    const [viaElysia, direct] = await bothWays(app, server.url, get(`/v2.2/updates/changes?after=${page.next}`));
    expect(direct).toEqual(viaElysia);
    expect(JSON.parse(direct.body)).toEqual({ changes: [], next: page.next, more: false });
  });

  test('a handler that throws: the same 500 both ways', async () => {
    const [viaElysia, direct] = await bothWays(throwing, throwingServer.url, (base) => new Request(`${base}/healthz`));
    expect(direct).toEqual(viaElysia);
    expect(direct.status).toBe(500);
    expect(JSON.parse(direct.body)).toEqual({
      statusCode: 500,
      error: 'INTERNAL',
      message: 'internal error: the health check broke',
    });
  });

  test('a handler whose promise rejects: the same 500 both ways', async () => {
    const [viaElysia, direct] = await bothWays(throwing, throwingServer.url, entitlementRequest);
    expect(direct).toEqual(viaElysia);
    expect(direct.status).toBe(500);
    expect(JSON.parse(direct.body)).toEqual({
      statusCode: 500,
      error: 'INTERNAL',
      message: 'internal error: the index broke',
    });
  });

  test('a handler that throws something other than an Error (null): the same 500 both ways', async () => {
    const nullThrowing = makeApp(
      { production: { store } },
      {
        health: () => {
          throw null;
        },
      },
    );
    const nullServer = startServer(nullThrowing, '127.0.0.1', 0);
    try {
      const [viaElysia, direct] = await bothWays(
        nullThrowing,
        nullServer.url,
        (base) => new Request(`${base}/healthz`),
      );
      expect(direct).toEqual(viaElysia);
      expect(JSON.parse(direct.body)).toEqual({ statusCode: 500, error: 'INTERNAL', message: 'internal error: null' });
    } finally {
      await nullServer.stop();
    }
  });

  test('another method on a direct route is still 405 with Allow, as through Elysia', async () => {
    const [viaElysia, direct] = await bothWays(
      app,
      server.url,
      (base) => new Request(`${base}/v2.2/entitlements`, { method: 'PUT', headers: { 'x-api-key': KEY } }),
    );
    expect(direct).toEqual(viaElysia);
    expect([direct.status, direct.headers.allow]).toEqual([405, 'POST']);
  });
});
