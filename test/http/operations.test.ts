import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { startServer } from '../../src/http/index.ts';
import { IngestStats } from '../../src/ingest/index.ts';
import { Store } from '../../src/store/index.ts';
import { tempDir } from '../support/fixtures.ts';
import {
  BASE,
  documents,
  errorOf,
  importCrossref,
  importSample,
  KEY,
  makeApp,
  postDois,
  type RawBody,
  streamOf,
} from './http-support.ts';

/** Operations routes (/openapi.json, /metrics, /livez, /readyz, /healthz) and the app served on a real port (docs/design.md, "HTTP"). */

let dir: ReturnType<typeof tempDir>;
let production: Store;
let staging: Store;

beforeAll(async () => {
  dir = tempDir('doi-holdings-http-ops-');
  production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  await importSample([production]);
  await importCrossref(
    [staging],
    [
      {
        DOI: '10.5555/s1',
        'updated-by': [{ DOI: '10.5555/n1', type: 'retraction', updated: { 'date-parts': [[2020, 1, 1]] } }],
      },
      {
        DOI: '10.5555/s2',
        'updated-by': [{ DOI: '10.5555/n2', type: 'correction', updated: { 'date-parts': [[2021]] } }],
      },
      {
        DOI: '10.5555/s3',
        'updated-by': [{ DOI: '10.5555/n3', type: 'erratum', updated: { 'date-parts': [[2022, 5]] } }],
      },
    ],
  );
});

afterAll(async () => {
  await production?.close();
  await staging?.close();
  dir?.remove();
});

const get = (app: ReturnType<typeof makeApp>, path: string, method = 'GET') =>
  app.handle(new Request(`${BASE}${path}`, { method }));

describe('GET /openapi.json', () => {
  test('an OpenAPI 3 document describing the updates and entitlements routes with the x-api-key scheme, from the validating schemas', async () => {
    const app = makeApp({ production: { store: production } });
    const r = await get(app, '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const doc = JSON.parse(await r.text());
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info).toEqual({
      title: expect.any(String),
      version: '9.9.9-test',
      license: { name: expect.any(String), identifier: 'LicenseRef-Proprietary' },
    });
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    for (const path of ['/v2.1/updates', '/v2.2/updates']) {
      const op = doc.paths[path].post;
      expect(op).toBeDefined();
      expect(Object.keys(doc.paths[path])).toEqual(['post']);
      expect(op.security).toEqual([{ apiKey: [] }]);
      expect(op.requestBody.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/UpdatesRequest',
      });
      expect(op.responses['200'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/UpdatesResponse',
      });
      for (const code of ['400', '401', '413', '415'])
        expect(op.responses[code].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const req = doc.components.schemas.UpdatesRequest;
    expect(req.type).toBe('object');
    expect(req.required).toEqual(['dois']);
    expect(req.additionalProperties).toBe(false);
    expect(req.properties.dois).toMatchObject({ type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' } });
    const docSchema = doc.components.schemas.UpdatesResponse.properties.documents.items;
    expect(docSchema.required).toEqual(['doi', 'statusCode', 'updates']);
    expect(Object.keys(docSchema.properties.updates.items.properties)).toEqual([
      'updateDoi',
      'source',
      'updateType',
      'updateDate',
      'reasons',
      'urls',
    ]);
    expect(doc.components.schemas.Error.required).toEqual(['statusCode', 'error', 'message']);
    for (const path of [
      '/v2.1/entitlements',
      '/v2.2/entitlements',
      '/staging/v2.1/entitlements',
      '/staging/v2.2/entitlements',
    ]) {
      const op = doc.paths[path].post;
      expect(op.requestBody.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/EntitlementsRequest',
      });
      expect(op.responses['200'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/EntitlementsResponse',
      });
      for (const code of ['400', '401', '413', '415'])
        expect(op.responses[code].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    const ent = doc.components.schemas.EntitlementsRequest;
    expect(ent.required).toEqual(['dois']);
    expect(ent.properties.dois).toMatchObject({ type: 'array', minItems: 1, maxItems: 100 });
    expect(ent.properties.dois.items.anyOf.map((s: { type: string }) => s.type)).toEqual(['string', 'object']);
    expect(Object.keys(ent.properties.org.properties)).toEqual(
      expect.arrayContaining(['ipv4', 'ipv6', 'entityID', 'openAthensOrgID', 'eduPersonScopedAffiliation']),
    );
    const obj = doc.components.schemas.EntitlementsResponse.properties.entitlements.items;
    expect(obj.required).toEqual(['statusCode']);
    expect(obj.properties.source.anyOf.map((s: { const: string }) => s.const)).toEqual([
      'oa_platform',
      'service_request',
      'service_cache',
      'publisher_not_supported',
      'unknown',
    ]);
    // every $ref points at a schema that exists
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(doc.components.schemas[ref]).toBeDefined();
  });

  test('is OpenAPI 3.1, whose schemas are the JSON Schema 2020-12 TypeBox writes; the /staging/ operations list their 404 NOT_CONFIGURED', async () => {
    const doc = JSON.parse(await (await get(makeApp({ production: { store: production } }), '/openapi.json')).text());
    expect(doc.openapi).toBe('3.1.0');
    const text = JSON.stringify(doc);
    // 2020-12 keywords are used (3.0 has neither), and 3.0's own `nullable` is not (3.1 has no such keyword)
    expect(text).toContain('"const":');
    expect(text).toContain('{"type":"null"}');
    expect(text).not.toContain('"nullable"');
    const error = { $ref: '#/components/schemas/Error' };
    for (const [path, ops] of Object.entries(
      doc.paths as Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
      >,
    ))
      for (const op of Object.values(ops)) {
        const notConfigured = op.responses['404']?.content?.['application/json']?.schema;
        if (path.startsWith('/staging/')) expect([path, notConfigured]).toEqual([path, error]);
        // a subscription's routes answer 404 for an id that is not the caller's (NOT_FOUND, not NOT_CONFIGURED)
        else if (path.startsWith('/v2.2/subscriptions/')) expect([path, notConfigured]).toEqual([path, error]);
        // status pages and deposit reports name what they do not find; the other production routes have no 404
        else if (!path.startsWith('/doi/') && !path.startsWith('/v2.2/platforms/'))
          expect([path, '404' in op.responses]).toEqual([path, false]);
      }
    expect(doc.paths['/staging/doi/{doi}'].get.responses['404'].description).toContain('NOT_CONFIGURED');
  });

  test('needs no key', async () => {
    const app = makeApp({ production: { store: production } });
    expect((await app.handle(new Request(`${BASE}/openapi.json`, { headers: { 'x-api-key': 'wrong' } }))).status).toBe(
      200,
    );
  });
});

describe('GET /metrics', () => {
  test('Prometheus text: works with updates per environment, ingest counters and HTTP requests by route and status', async () => {
    const ingest = new IngestStats();
    ingest.filesApplied = 7;
    ingest.queueDepth = 3;
    const app = makeApp({ production: { store: production, ingest }, staging: { store: staging } });
    // 2 x 200 and 1 x 401 on /v2.2, 1 x 400 on staging /v2.1, 1 x 404 elsewhere
    expect((await postDois(app, '/v2.2/updates', ['10.1234/a'])).status).toBe(200);
    expect((await postDois(app, '/v2.2/updates', ['10.1234/b', 'bad'])).status).toBe(200);
    expect((await postDois(app, '/v2.2/updates', ['10.1234/a'], { key: 'wrong' })).status).toBe(401);
    expect((await postDois(app, '/staging/v2.1/updates', [])).status).toBe(400);
    expect((await postDois(app, '/nowhere', ['10.1234/a'])).status).toBe(404);

    const r = await get(app, '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await r.text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines).toContain('# TYPE doi_holdings_http_requests_total counter');
    expect(lines).toContain('doi_holdings_http_requests_total{route="/v2.2/updates",status="200"} 2');
    expect(lines).toContain('doi_holdings_http_requests_total{route="/v2.2/updates",status="401"} 1');
    expect(lines).toContain('doi_holdings_http_requests_total{route="/staging/v2.1/updates",status="400"} 1');
    expect(lines.filter((l) => l.startsWith('doi_holdings_http_requests_total{route="/v2.1/updates"'))).toEqual([]);
    expect(lines).toContain('# TYPE doi_holdings_works_with_updates gauge');
    expect(lines).toContain('doi_holdings_works_with_updates{env="production"} 2975');
    expect(lines).toContain('doi_holdings_works_with_updates{env="staging"} 3');
    // the change feed holds each of those works once
    expect(lines).toContain('doi_holdings_change_feed_seq{env="production"} 2975');
    expect(lines.filter((l) => l.startsWith('doi_holdings_change_feed_commit{env="staging"} '))).toHaveLength(1);
    expect(lines).toContain('doi_holdings_files_applied_total{env="production"} 7');
    expect(lines).toContain('doi_holdings_ingest_queue_depth{env="production"} 3');
    expect(lines.some((l) => l.startsWith('doi_holdings_files_applied_total{env="staging"}'))).toBe(false);
    // latency histogram by route and status: cumulative buckets up to +Inf, which equals the count
    expect(lines).toContain('# TYPE doi_holdings_http_request_duration_seconds histogram');
    expect(lines).toContain(
      'doi_holdings_http_request_duration_seconds_bucket{le="+Inf",route="/v2.2/updates",status="200"} 2',
    );
    expect(lines).toContain('doi_holdings_http_request_duration_seconds_count{route="/v2.2/updates",status="200"} 2');
    const buckets = lines.filter(
      (l) =>
        l.startsWith('doi_holdings_http_request_duration_seconds_bucket{') &&
        l.includes('status="200"') &&
        l.includes('"/v2.2/updates"'),
    );
    const counts = buckets.map((l) => Number(l.split(' ').pop()));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    // every sample line is `name{labels} number`, and every metric has HELP and TYPE
    for (const l of lines) {
      if (l.startsWith('#')) expect(l).toMatch(/^# (HELP|TYPE) [a-z_]+ .+$/);
      else expect(l).toMatch(/^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?\d+(\.\d+)?(e-?\d+)?$/);
    }
    const named = new Set(lines.filter((l) => !l.startsWith('#')).map((l) => l.replace(/[{ ].*$/, '')));
    for (const n of named) {
      const histogram = n.replace(/_(bucket|sum|count)$/, '');
      const type = lines.includes(`# TYPE ${histogram} histogram`) ? histogram : n;
      expect(lines).toContain(
        `# TYPE ${type} ${type !== n ? 'histogram' : n.endsWith('_total') ? 'counter' : 'gauge'}`,
      );
      expect(lines.some((l) => l.startsWith(`# HELP ${type} `))).toBe(true);
    }

    // counters move with further requests
    await postDois(app, '/v2.2/updates', ['10.1234/c']);
    const again = (await (await get(app, '/metrics')).text()).split('\n');
    expect(again).toContain('doi_holdings_http_requests_total{route="/v2.2/updates",status="200"} 3');
  });

  test("the change feed's series keep their labels from one commit to the next: the lineage is a value, not a label", async () => {
    const own = tempDir('doi-holdings-http-lineage-');
    const store = Store.open(own.path, 'production', { mapSizeBytes: 1 << 28 });
    try {
      const app = makeApp({ production: { store } });
      const scrape = async () =>
        (await (await get(app, '/metrics')).text())
          .split('\n')
          .filter((l) => l.startsWith('doi_holdings_change_feed_'));
      const work = (n: number) => ({
        DOI: `10.5555/w${n}`,
        'updated-by': [{ DOI: `10.5555/notice${n}`, type: 'retraction', updated: { 'date-parts': [[2020, 1, n]] } }],
      });
      await importCrossref([store], [work(1)]);
      const before = await scrape();
      await importCrossref([store], [work(1), work(2)]);
      const after = await scrape();
      const series = (lines: string[]) => lines.map((l) => l.slice(0, l.lastIndexOf(' ')));
      expect(series(after)).toEqual([
        'doi_holdings_change_feed_commit{env="production"}',
        'doi_holdings_change_feed_lineage{env="production"}',
        'doi_holdings_change_feed_seq{env="production"}',
      ]);
      expect(series(before)).toEqual(series(after));
      const value = (lines: string[], name: string) => Number(lines.find((l) => l.startsWith(name))!.split(' ')[1]);
      expect(value(after, 'doi_holdings_change_feed_commit')).toBe(
        value(before, 'doi_holdings_change_feed_commit') + 1,
      );
      expect(value(after, 'doi_holdings_change_feed_lineage')).not.toBe(
        value(before, 'doi_holdings_change_feed_lineage'),
      );
      expect(value(after, 'doi_holdings_change_feed_lineage')).toBe(
        Number.parseInt(store.changeFeed.head().hash.slice(0, 13), 16),
      );
    } finally {
      await store.close();
      own.remove();
    }
  });
});

describe('GET /healthz', () => {
  test('200 when health() is ok, 503 when it is not, following health() on each call', async () => {
    let ok = true;
    const app = makeApp(
      { production: { store: production } },
      { health: () => ({ ok, checks: { store: ok ? 'open' : 'closed', lagSeconds: 4 } }) },
    );
    const up = await get(app, '/healthz');
    expect(up.status).toBe(200);
    expect(up.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await up.json()).toEqual({ status: 'ok', version: '9.9.9-test', store: 'open', lagSeconds: 4 });
    ok = false;
    const down = await get(app, '/healthz');
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unhealthy', version: '9.9.9-test', store: 'closed', lagSeconds: 4 });
    ok = true;
    expect((await get(app, '/healthz')).status).toBe(200);
  });
});

describe('GET /livez and GET /readyz', () => {
  test('/livez is 200 whatever health() and ready() say; /readyz follows ready() on each call, 503 naming what is not ready', async () => {
    let ready = true;
    const app = makeApp(
      { production: { store: production } },
      {
        health: () => ({ ok: false, failed: ['production: ingestion stuck'], checks: {} }),
        ready: () => (ready ? { ok: true, failed: [] } : { ok: false, failed: ['daemon: shutting down'] }),
      },
    );
    const live = await get(app, '/livez');
    expect([live.status, live.headers.get('content-type'), await live.json()]).toEqual([
      200,
      'application/json; charset=utf-8',
      { status: 'live' },
    ]);
    const up = await get(app, '/readyz');
    expect([up.status, up.headers.get('content-type'), await up.json()]).toEqual([
      200,
      'application/json; charset=utf-8',
      { status: 'ready' },
    ]);
    ready = false;
    const down = await get(app, '/readyz');
    expect([down.status, await down.json()]).toEqual([503, { status: 'not ready', failed: ['daemon: shutting down'] }]);
    expect((await get(app, '/livez')).status).toBe(200);
    ready = true;
    expect((await get(app, '/readyz')).status).toBe(200);
  });

  test('an app given no ready() (no daemon behind it) is ready', async () => {
    const r = await get(makeApp({ production: { store: production } }), '/readyz');
    expect([r.status, await r.json()]).toEqual([200, { status: 'ready' }]);
  });
});

describe('wrong method on the operations routes', () => {
  for (const path of ['/livez', '/readyz', '/healthz', '/metrics', '/openapi.json'])
    test(`POST ${path}: 405 with Allow: GET, HEAD; and HEAD is answered as GET without the body`, async () => {
      const app = makeApp({ production: { store: production } });
      const r = await get(app, path, 'POST');
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD');
      expect((await errorOf(r)).body).toEqual({
        statusCode: 405,
        error: 'METHOD_NOT_ALLOWED',
        message: expect.stringContaining('POST'),
      });
      const server = startServer(app, '127.0.0.1', 0);
      try {
        const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
        expect([head.status, await head.text()]).toEqual([200, '']);
      } finally {
        await server.stop();
      }
    });
});

describe('over a real port', () => {
  test('startServer on port 0, then fetch: updates, errors, a chunked body over the limit, operations routes', async () => {
    const app = makeApp({ production: { store: production }, staging: { store: staging } }, { maxBodyBytes: 1000 });
    const server = startServer(app, '127.0.0.1', 0);
    try {
      expect(server.port).toBeGreaterThan(0);
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      const send = (
        path: string,
        body: RawBody,
        headers: Record<string, string> = { 'x-api-key': KEY, 'content-type': 'application/json' },
      ) => fetch(`${server.url}${path}`, { method: 'POST', headers, body });

      const docs = await documents(
        await send(
          '/v2.2/updates',
          JSON.stringify({ dois: ['https://doi.org/10.3892/IJO.2017.3871', 'x', '10.5555/s1'] }),
        ),
      );
      expect(docs.map((d) => [d.doi, d.statusCode, d.updates.map((u) => `${u.updateType}@${u.updateDate}`)])).toEqual([
        ['https://doi.org/10.3892/IJO.2017.3871', 200, ['correction@2022-12-07', 'retraction@2023-08-04']],
        ['x', 400, []],
        ['10.5555/s1', 200, []],
      ]);
      const staged = await documents(await send('/staging/v2.1/updates', JSON.stringify({ dois: ['10.5555/s1'] })));
      expect(staged).toEqual([
        {
          doi: '10.5555/s1',
          statusCode: 200,
          updates: [
            {
              updateDoi: '10.5555/n1',
              source: 'crossref',
              updateType: 'retraction',
              updateDate: '2020-01-01',
              reasons: [],
              urls: ['https://doi.org/10.5555/n1'],
            },
          ],
        },
      ]);

      const unauth = await send('/v2.2/updates', '{', { 'content-type': 'application/json' });
      expect(unauth.status).toBe(401);
      expect(((await unauth.json()) as { error: string }).error).toBe('UNAUTHORIZED');

      const bad = await send('/v2.2/updates', '{"dois": [1]}');
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({
        statusCode: 400,
        error: 'BAD_REQUEST',
        message: expect.stringContaining('/dois/0'),
      });

      // a streamed body goes out without Content-Length; 1,500 bytes > 1,000
      const big = JSON.stringify({ dois: ['10.1234/a'], pad: 'p'.repeat(1500) });
      const tooBig = await send('/v2.2/updates', streamOf(big, 100));
      expect(tooBig.status).toBe(413);
      expect(((await tooBig.json()) as { error: string }).error).toBe('PAYLOAD_TOO_LARGE');
      // and a streamed body within the limit is served
      const fine = await send('/v2.2/updates', streamOf(JSON.stringify({ dois: ['10.3892/ijo.2017.3871'] }), 5));
      expect((await documents(fine))[0]!.updates).toHaveLength(2);

      const wrong = await fetch(`${server.url}/v2.2/updates`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('POST');
      expect((await fetch(`${server.url}/missing`)).status).toBe(404);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${server.url}/metrics`)).text()).toContain(
        'doi_holdings_http_requests_total{route="/v2.2/updates",status="413"} 1',
      );
      const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).toContain('/v2.2/updates');
    } finally {
      await server.stop();
    }
    // stopped: the port no longer answers
    let refused = false;
    try {
      await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2000) });
    } catch {
      refused = true;
    }
    expect(refused).toBe(true);
  });
});

/** One raw HTTP/1.1 exchange (so the Host header and the framing are exactly what is written). */
function rawHttp(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(request));
    let data = '';
    sock.setEncoding('utf8');
    sock.on('data', (c) => (data += c));
    sock.on('error', reject);
    sock.setTimeout(10_000, () => {
      sock.destroy();
      reject(new Error(`no complete answer within 10 s; got ${JSON.stringify(data.slice(0, 200))}`));
    });
    sock.on('end', () => {
      const head = data.slice(0, data.indexOf('\r\n\r\n'));
      let body = data.slice(head.length + 4);
      if (/\r\ntransfer-encoding: chunked/i.test(head)) {
        let out = '';
        for (;;) {
          const eol = body.indexOf('\r\n');
          const n = parseInt(body.slice(0, eol), 16);
          if (!n) break;
          out += body.slice(eol + 2, eol + 2 + n);
          body = body.slice(eol + 2 + n + 2);
        }
        body = out;
      }
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

describe('over a real port, whatever the Host header', () => {
  test('short Host names ("api", "a", "api:80") are routed by the real path', async () => {
    const app = makeApp({ production: { store: production } }, { maxBodyBytes: 1000 });
    const server = startServer(app, '127.0.0.1', 0);
    try {
      const body = JSON.stringify({ dois: ['10.3892/ijo.2017.3871', 'nope'] });
      for (const host of ['api', 'a', 'api:80', 'doi-holdings.example.org']) {
        const health = await rawHttp(
          server.port,
          `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        );
        expect([host, health.status, JSON.parse(health.body)]).toEqual([
          host,
          200,
          { status: 'ok', version: '9.9.9-test' },
        ]);

        const sized = await rawHttp(
          server.port,
          `POST /v2.2/updates HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        expect([host, sized.status]).toEqual([host, 200]);
        const docs = JSON.parse(sized.body).documents as {
          doi: string;
          statusCode: number;
          updates: { updateType: string }[];
        }[];
        expect(docs.map((d) => [d.doi, d.statusCode, d.updates.map((u) => u.updateType)])).toEqual([
          ['10.3892/ijo.2017.3871', 200, ['correction', 'retraction']],
          ['nope', 400, []],
        ]);

        // chunked, over the 1,000-byte limit: still bounded after the request is handed on
        const big = JSON.stringify({ dois: ['10.1234/a'], pad: 'p'.repeat(1200) });
        const chunks = big
          .match(/[\s\S]{1,300}/g)!
          .map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`)
          .join('');
        const chunked = await rawHttp(
          server.port,
          `POST /v2.2/updates HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`,
        );
        expect([host, chunked.status, JSON.parse(chunked.body).error]).toEqual([host, 413, 'PAYLOAD_TOO_LARGE']);

        const noKey = await rawHttp(
          server.port,
          `POST /v2.1/updates HTTP/1.1\r\nHost: ${host}\r\ncontent-type: application/json\r\ncontent-length: 2\r\nConnection: close\r\n\r\n{}`,
        );
        expect([host, noKey.status]).toEqual([host, 401]);

        const missing = await rawHttp(
          server.port,
          `GET /v2.2/nothing HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        );
        expect([host, missing.status, JSON.parse(missing.body).error]).toEqual([host, 404, 'NOT_FOUND']);

        // the status pages are a wildcard route, which Bun's own router does not take from Elysia
        const page = await rawHttp(
          server.port,
          `GET /doi/10.3892/ijo.2017.3871?format=json HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        );
        expect([host, page.status, JSON.parse(page.body).doi]).toEqual([host, 200, '10.3892/ijo.2017.3871']);
      }
    } finally {
      await server.stop();
    }
  });
});

describe('over a real port, Content-Length is the framing', () => {
  test('a Content-Length that understates the body: only the declared bytes are read (so the bound holds)', async () => {
    const app = makeApp({ production: { store: production } }, { maxBodyBytes: 300 });
    const server = startServer(app, '127.0.0.1', 0);
    try {
      const body = JSON.stringify({ dois: [`10.1234/${'a'.repeat(400)}`] });
      const r = await rawHttp(
        server.port,
        `POST /v2.2/updates HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: 20\r\nConnection: close\r\n\r\n${body}`,
      );
      // the first 20 bytes, '{"dois":["10.1234/aa', are all the handler sees: not JSON
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body.slice(0, r.body.indexOf('}') + 1))).toEqual({
        statusCode: 400,
        error: 'INVALID_JSON',
        message: expect.any(String),
      });

      const honest = await rawHttp(
        server.port,
        `POST /v2.2/updates HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      expect([honest.status, JSON.parse(honest.body)]).toEqual([
        413,
        { statusCode: 413, error: 'PAYLOAD_TOO_LARGE', message: 'the body is larger than 300 bytes' },
      ]);
    } finally {
      await server.stop();
    }
  });
});
