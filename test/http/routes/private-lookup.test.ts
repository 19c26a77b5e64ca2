import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { App } from '../../../src/http/index.ts';
import { startServer } from '../../../src/http/server.ts';
import { Store } from '../../../src/store/index.ts';
import type { UpdateObject } from '../../../src/updates/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { BASE, documents, errorOf, importCrossref, importSample, KEY, makeApp, postDois } from '../http-support.ts';

/**
 * The private lookup (docs/design.md, "Private lookup") over the real Retraction Watch sample: the prefix list and
 * the lookup by prefix agree with the Updates API for every work; and the client scripts in examples/ run
 * against a real server.
 */

const REPO = join(import.meta.dir, '..', '..', '..');
const BUN = process.execPath;
type PrefixList = { algorithm: string; of: string; prefixLength: number; works: number; prefixes: string[] };
type Found = { hash: string; doi: string; updates: UpdateObject[] };

let dir: ReturnType<typeof tempDir>;
let store: Store;
let app: App;
let dois: string[];

/** computed here, not by the service: SHA-256 of the DOI with ASCII letters lower-cased */
const hashOf = (doi: string) =>
  createHash('sha256')
    .update(doi.replace(/[A-Z]/g, (c) => c.toLowerCase()))
    .digest('hex');

beforeAll(async () => {
  dir = tempDir('private-lookup');
  store = Store.open(dir.path, 'production', { mapSizeBytes: 256 * 1024 ** 2 });
  app = makeApp({ production: { store } });
  dois = [...(await importSample([store])).works.values()].map((w) => w.doi);
});
afterAll(async () => {
  await store.close();
  dir.remove();
});

function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return app.handle(new Request(`${BASE}${path}`, { headers: { 'x-api-key': KEY, ...headers } }));
}

function byPrefix(prefixes: unknown, key: string | null = KEY): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers['x-api-key'] = key;
  return app.handle(
    new Request(`${BASE}/v2.2/updates/by-prefix`, { method: 'POST', headers, body: JSON.stringify({ prefixes }) }),
  );
}

async function prefixList(): Promise<{ list: PrefixList; etag: string }> {
  const r = await get('/v2.2/updates/prefixes');
  expect(r.status).toBe(200);
  return { list: (await r.json()) as PrefixList, etag: r.headers.get('etag')! };
}

describe('the private lookup', () => {
  test('every work of the sample is under a listed prefix, and the lookup gives it with its full hash and the Updates API’s list', async () => {
    const { list } = await prefixList();
    expect(list.algorithm).toBe('sha256');
    expect(list.works).toBe(dois.length);
    // the length keeps at least 4 works with updates per prefix on average, and is the longest that does
    expect(list.works / 16 ** list.prefixLength).toBeGreaterThanOrEqual(4);
    expect(list.works / 16 ** (list.prefixLength + 1)).toBeLessThan(4);
    expect(list.prefixes).toEqual([...new Set(list.prefixes)].sort());
    const listed = new Set(list.prefixes);
    const found = new Map<string, Found>();
    for (let i = 0; i < list.prefixes.length; i += 100) {
      const r = await byPrefix(list.prefixes.slice(i, i + 100));
      expect(r.status).toBe(200);
      const body = (await r.json()) as { prefixLength: number; works: Found[] };
      expect(body.prefixLength).toBe(list.prefixLength);
      for (const w of body.works) found.set(w.hash, w);
    }
    // every listed prefix has works, and together they are exactly the sample's works
    expect(found.size).toBe(dois.length);
    for (let i = 0; i < dois.length; i += 100) {
      for (const d of await documents(await postDois(app, '/v2.2/updates', dois.slice(i, i + 100)))) {
        const h = hashOf(d.doi);
        expect(listed.has(h.slice(0, list.prefixLength))).toBe(true);
        expect(found.get(h)?.updates).toEqual(d.updates);
        expect(found.get(h)?.doi.toLowerCase()).toBe(d.doi.toLowerCase());
      }
    }
    // a DOI without updates is never in a lookup's answer
    const none = hashOf('10.5555/no-updates-here');
    const r = await byPrefix([none.slice(0, list.prefixLength)]);
    expect(((await r.json()) as { works: Found[] }).works.map((w) => w.hash)).not.toContain(none);
  });

  test('the list has an ETag and answers 304 to If-None-Match until the updates change; gzip on request', async () => {
    const { list, etag } = await prefixList();
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const same = await get('/v2.2/updates/prefixes', { 'if-none-match': etag });
    expect(same.status).toBe(304);
    expect(same.headers.get('etag')).toBe(etag);
    expect(await same.text()).toBe('');
    expect((await get('/v2.2/updates/prefixes', { 'if-none-match': `W/${etag}, "other"` })).status).toBe(304);
    const zipped = await get('/v2.2/updates/prefixes', { 'accept-encoding': 'gzip, br' });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(JSON.parse(gunzipSync(Buffer.from(await zipped.arrayBuffer())).toString())).toEqual(list);
    await importCrossref([store], {
      items: [
        {
          DOI: '10.5555/pl.n',
          'update-to': [
            { DOI: '10.5555/pl.w', type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2024, 1, 1]] } },
          ],
        },
      ],
    });
    // the list is a read model that follows the store: read again on a worker once reads are slow, the old list
    // answering meanwhile (docs/design.md, "Private lookup")
    const changed = await waitFor(async () => {
      const r = await get('/v2.2/updates/prefixes', { 'if-none-match': etag });
      return r.status !== 304 && r;
    }, 'the prefix list to follow the import');
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(((await changed.json()) as PrefixList).works).toBe(list.works + 1);
  });

  test('gzip only when Accept-Encoding allows it (q=0 refuses it); each coding its own ETag, each revalidated to 304; Vary: Accept-Encoding', async () => {
    const { list, etag } = await prefixList();
    const asked = async (acceptEncoding: string, ifNoneMatch?: string) => {
      const r = await get('/v2.2/updates/prefixes', {
        'accept-encoding': acceptEncoding,
        ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}),
      });
      const bytes = Buffer.from(await r.arrayBuffer());
      return {
        status: r.status,
        coding: r.headers.get('content-encoding'),
        etag: r.headers.get('etag')!,
        vary: r.headers.get('vary'),
        bytes,
      };
    };
    for (const refused of ['gzip;q=0', 'identity', '*;q=0, identity', 'br']) {
      const r = await asked(refused);
      expect([refused, r.status, r.coding, r.etag, r.vary]).toEqual([refused, 200, null, etag, 'accept-encoding']);
      expect(JSON.parse(r.bytes.toString())).toEqual(list);
    }
    const zipped = await asked('gzip;q=0.5, identity');
    expect([zipped.status, zipped.coding, zipped.vary]).toEqual([200, 'gzip', 'accept-encoding']);
    expect(JSON.parse(gunzipSync(zipped.bytes).toString())).toEqual(list);
    expect(zipped.etag).toMatch(/^"[0-9a-f]{32}-gzip"$/);
    expect(zipped.etag).not.toBe(etag);
    // each coding revalidates with its own ETag; the other coding's ETag does not match
    expect((await asked('gzip', zipped.etag)).status).toBe(304);
    expect((await asked('gzip', zipped.etag)).etag).toBe(zipped.etag);
    expect((await asked('identity', etag)).status).toBe(304);
    expect((await asked('gzip', etag)).status).toBe(200);
    expect((await asked('identity', zipped.etag)).status).toBe(200);
    expect((await asked('gzip;q=0', zipped.etag)).status).toBe(200);
  });

  test('bad lookups: no key, not hex, too short for the list, none or too many', async () => {
    const { list } = await prefixList();
    expect((await byPrefix(['ab'], null)).status).toBe(401);
    expect((await get('/v2.2/updates/prefixes', { 'x-api-key': 'nope' })).status).toBe(401);
    for (const [prefixes, words] of [
      [['xyz'], 'prefixes/0'],
      [[], 'prefixes'],
      [Array.from({ length: 101 }, () => 'ab'), 'prefixes'],
      [['ab', '1'.repeat(Math.max(0, list.prefixLength - 2))], 'shorter than'],
    ] as const) {
      if (words === 'shorter than' && list.prefixLength < 3) continue;
      const e = await errorOf(await byPrefix(prefixes));
      expect(e.status).toBe(400);
      expect(String(e.body.message)).toContain(words);
    }
  });

  test('the example client scripts run against a real server: a lookup that sends no DOI, and a change-feed sync', async () => {
    const server = startServer(app, '127.0.0.1', 0);
    // in front of the real server, a proxy that keeps what the scripts send
    const sent: string[] = [];
    const proxy = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        const body = request.method === 'POST' ? await request.text() : undefined;
        sent.push(`${request.method} ${url.pathname}${url.search} ${body ?? ''}`);
        const headers = new Headers(request.headers);
        headers.delete('host');
        const r = await fetch(`${server.url}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body,
          decompress: false,
        } as RequestInit);
        return new Response(r.body, { status: r.status, headers: r.headers });
      },
    });
    const via = `http://127.0.0.1:${proxy.port}`;
    try {
      const env = { ...process.env, DOI_HOLDINGS_API_KEY: KEY };
      const cache = join(dir.path, 'prefixes.json');
      // a doi.org link's DOI is percent-decoded, by the service and the script alike
      const asked = [
        dois[0]!,
        dois[1]!.toUpperCase(),
        `https://doi.org/${dois[2]}`,
        `https://doi.org/${dois[3]!.replace('/', '%2F')}`,
        '10.5555/not-retracted',
      ];
      // not spawnSync: the server answering the script runs in this process
      const run = async (args: string[], runEnv: Record<string, string | undefined> = env) => {
        const p = Bun.spawn([BUN, ...args], { cwd: REPO, env: runEnv, stdout: 'pipe', stderr: 'pipe' });
        const [stdout, stderr, exitCode] = await Promise.all([
          new Response(p.stdout).text(),
          new Response(p.stderr).text(),
          p.exited,
        ]);
        return { stdout, stderr, exitCode };
      };
      const lookup = await run(['examples/private-lookup.ts', via, '--cache', cache, ...asked]);
      expect(lookup.stderr).toContain('asked about');
      expect(lookup.exitCode).toBe(0);
      const lines = lookup.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { doi: string; updates: UpdateObject[] });
      const api = await documents(await postDois(app, '/v2.2/updates', asked));
      expect(lines).toEqual(api.map((d) => ({ doi: d.doi, updates: d.updates })));
      expect(JSON.parse(readFileSync(cache, 'utf8')).etag).toMatch(/^"/);
      // the service saw prefixes only: no DOI, no full hash
      expect(sent.some((s) => s.startsWith('POST /v2.2/updates/by-prefix'))).toBe(true);
      for (const d of asked) {
        expect(sent.join('\n').toLowerCase()).not.toContain(d.toLowerCase().replace('https://doi.org/', ''));
        expect(sent.join('\n')).not.toContain(hashOf(d.replace('https://doi.org/', '')));
      }
      // the second run revalidates its cached list: a 304
      const before = sent.length;
      expect((await run(['examples/private-lookup.ts', via, '--cache', cache, dois[0]!])).exitCode).toBe(0);
      expect(sent[before]).toStartWith('GET /v2.2/updates/prefixes');

      const stateFile = join(dir.path, 'state.json');
      const first = await run(['examples/sync-changes.ts', via, stateFile]);
      expect(first.exitCode).toBe(0);
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { works: Record<string, UpdateObject[]> };
      // the prefix list follows the store a moment later than the change feed the script read
      const works = Object.keys(state.works).length;
      await waitFor(async () => (await prefixList()).list.works === works, `the prefix list to count ${works} works`);
      await importCrossref([store], { items: [{ DOI: '10.5555/pl.w', 'updated-by': [] }] });
      const second = await run(['examples/sync-changes.ts', via, stateFile]);
      expect(JSON.parse(second.stdout)).toMatchObject({ changed: 1 });
      expect(JSON.parse(readFileSync(stateFile, 'utf8')).works['10.5555/pl.w']).toBeUndefined();

      // given no file, both keep theirs in the system's temporary folder ($TMPDIR), not where they run
      const tmp = join(dir.path, 'tmp');
      mkdirSync(tmp);
      const kept = join(tmp, 'doi-holdings-examples');
      expect((await run(['examples/private-lookup.ts', via, dois[0]!], { ...env, TMPDIR: tmp })).exitCode).toBe(0);
      expect(JSON.parse(readFileSync(join(kept, 'prefixes.json'), 'utf8')).etag).toMatch(/^"/);
      const synced = await run(['examples/sync-changes.ts', via], { ...env, TMPDIR: tmp });
      expect(JSON.parse(synced.stdout).state).toBe(join(kept, 'sync-state.json'));
      expect(existsSync(join(kept, 'sync-state.json'))).toBe(true);
      expect(existsSync(join(REPO, 'prefixes.json')) || existsSync(join(REPO, 'sync-state.json'))).toBe(false);
    } finally {
      proxy.stop(true);
      await server.stop();
    }
  });
});
