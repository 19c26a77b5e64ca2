import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import type { UpdateObject } from '../../../src/updates/index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { csv, FRANKEN, FRANKEN_DOI, ROWS, row } from '../../support/rw-sample.ts';
import { BASE, documents, errorOf, importCrossref, importSample, KEY, makeApp, postDois } from '../http-support.ts';

/**
 * The change feed (docs/design.md, "Change feed") through HTTP over real stores: full and incremental syncs across
 * imports, withdrawals and a restart; replicas that made the same changes hand out interchangeable cursors.
 */

type Item = { doi: string; updates: UpdateObject[] };
type Page = { changes: Item[]; next: string; more: boolean };

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir('change-feed');
});
afterAll(() => dir.remove());

function openStore(name: string, changeFeedKeepMs?: number): Store {
  return Store.open(join(dir.path, name), 'production', {
    mapSizeBytes: 256 * 1024 ** 2,
    ...(changeFeedKeepMs !== undefined ? { changeFeedKeepMs } : {}),
  });
}

function appOf(store: Store): App {
  return makeApp({ production: { store } });
}

function get(app: App, path: string, headers: Record<string, string> = { 'x-api-key': KEY }): Promise<Response> {
  return app.handle(new Request(`${BASE}${path}`, { headers }));
}

async function page(app: App, after: string | undefined, limit = 100): Promise<Page> {
  const query = new URLSearchParams({ limit: String(limit), ...(after !== undefined ? { after } : {}) });
  const r = await get(app, `/v2.2/updates/changes?${query}`);
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return JSON.parse(text) as Page;
}

/** A client's sync: pages until `more` is false, applying each item as state; the replica asked turns with each page. */
async function sync(
  apps: readonly App[],
  state: Map<string, UpdateObject[]>,
  after?: string,
  limit = 100,
): Promise<{ cursor: string; seen: string[] }> {
  const seen: string[] = [];
  let cursor = after;
  for (let i = 0; ; i++) {
    const p = await page(apps[i % apps.length]!, cursor, limit);
    for (const item of p.changes) {
      seen.push(item.doi.toLowerCase());
      if (item.updates.length === 0) state.delete(item.doi.toLowerCase());
      else state.set(item.doi.toLowerCase(), item.updates);
    }
    cursor = p.next;
    if (!p.more) return { cursor, seen };
    if (i > 10_000) throw new Error('the feed never ended');
  }
}

/** What the Updates API says of these DOIs: only those with updates. */
async function updatesApi(app: App, dois: readonly string[]): Promise<Map<string, UpdateObject[]>> {
  const out = new Map<string, UpdateObject[]>();
  for (let i = 0; i < dois.length; i += 100) {
    for (const d of await documents(await postDois(app, '/v2.2/updates', dois.slice(i, i + 100))))
      if (d.updates.length > 0) out.set(d.doi.toLowerCase(), d.updates);
  }
  return out;
}

describe('the change feed', () => {
  test('a full sync of the real sample gives every work with updates once, as the Updates API gives it; then incremental syncs follow imports, withdrawals and a restart', async () => {
    const store = openStore('one');
    let app = appOf(store);
    const sample = await importSample([store]);
    const state = new Map<string, UpdateObject[]>();
    const full = await sync([app], state);
    expect(new Set(full.seen).size).toBe(full.seen.length);
    expect(state.size).toBe(sample.works.size);
    const dois = [...sample.works.values()].map((w) => w.doi);
    expect(state).toEqual(await updatesApi(app, dois));

    // nothing new: an empty page and the same cursor
    const empty = await page(app, full.cursor);
    expect(empty).toEqual({ changes: [], next: full.cursor, more: false });

    // a Crossref notice for a sample work and for a new one
    await importCrossref([store], {
      items: [
        {
          DOI: '10.5555/notice.1',
          'update-to': [
            { DOI: FRANKEN_DOI, type: 'correction', source: 'publisher', updated: { 'date-parts': [[2024, 5, 6]] } },
          ],
        },
        {
          DOI: '10.5555/notice.2',
          'update-to': [
            {
              DOI: '10.5555/brand.new',
              type: 'retraction',
              source: 'publisher',
              updated: { 'date-parts': [[2024, 5, 7]] },
            },
          ],
        },
      ],
    });
    const second = await sync([app], state, full.cursor);
    expect(second.seen.sort()).toEqual([FRANKEN_DOI, '10.5555/brand.new'].sort());
    expect(state.get(FRANKEN_DOI)!.map((u) => u.updateType)).toEqual(['retraction', 'correction']);
    expect(state.get(FRANKEN_DOI)![0]).toEqual(FRANKEN);

    // a restart: the cursor is still good
    await store.close();
    const reopened = openStore('one');
    app = appOf(reopened);
    expect(await page(app, second.cursor)).toEqual({ changes: [], next: second.cursor, more: false });

    // a withdrawal: the next CSV lacks Franken's row; its Crossref correction stays
    const without = ROWS.filter((r) => r !== row(70000));
    await importUpdates([reopened], 'retraction-watch-csv', [
      Buffer.from(csv(without)),
    ] as unknown as AsyncIterable<Uint8Array>);
    const third = await sync([app], state, second.cursor);
    expect(third.seen).toEqual([FRANKEN_DOI]);
    expect(state.get(FRANKEN_DOI)!.map((u) => u.updateType)).toEqual(['correction']);
    expect(state).toEqual(await updatesApi(app, [...dois, '10.5555/brand.new']));

    // the last update of a work withdrawn: the work comes with updates [] and leaves the client's state
    await importCrossref([reopened], { items: [{ DOI: '10.5555/brand.new', 'updated-by': [] }] });
    const p = await page(app, third.cursor);
    expect(p.changes).toEqual([{ doi: '10.5555/brand.new', updates: [] }]);
    await reopened.close();
  });

  test('replicas that made the same changes hand out interchangeable cursors; an alternating client ends with what the Updates API gives', async () => {
    const a = openStore('replica-a');
    const b = openStore('replica-b');
    const apps = [appOf(a), appOf(b)];
    const sample = await importSample([a, b]);
    const state = new Map<string, UpdateObject[]>();
    const first = await sync(apps, state, undefined, 50);
    const dois = [...sample.works.values()].map((w) => w.doi);
    expect(state).toEqual(await updatesApi(apps[0]!, dois));

    // A is ahead of B: B answers an empty page and the cursor back until it has caught up, then carries on
    const notice = {
      items: [
        {
          DOI: '10.5555/n.3',
          'update-to': [
            { DOI: dois[0], type: 'erratum', source: 'publisher', updated: { 'date-parts': [[2025, 1, 2]] } },
          ],
        },
      ],
    };
    await importCrossref([a], notice);
    const fromA = await page(apps[0]!, first.cursor);
    expect(fromA.changes.map((c) => c.doi)).toEqual([dois[0]]);
    expect(await page(apps[1]!, fromA.next)).toEqual({ changes: [], next: fromA.next, more: false });
    await importCrossref([b], notice);
    expect(await page(apps[1]!, fromA.next)).toEqual({ changes: [], next: fromA.next, more: false });
    await importCrossref([a, b], {
      items: [
        {
          DOI: '10.5555/n.4',
          'update-to': [
            { DOI: dois[1], type: 'addendum', source: 'publisher', updated: { 'date-parts': [[2025, 1, 3]] } },
          ],
        },
      ],
    });
    const rest = await sync([apps[1]!, apps[0]!], state, first.cursor, 1);
    expect(rest.seen.sort()).toEqual([dois[0]!.toLowerCase(), dois[1]!.toLowerCase()].sort());
    // the Updates API's read index looks for new imports every 250 ms
    for (const s of [a, b]) s.updatesIndex.refresh(true);
    expect(state).toEqual(await updatesApi(apps[1]!, dois));
    expect(state).toEqual(await updatesApi(apps[0]!, dois));
    await Promise.all([a.close(), b.close()]);
  });

  test('a replica whose feed history differs refuses the other one’s cursor with 410, and a full sync there starts over', async () => {
    const a = openStore('history-a');
    const b = openStore('history-b');
    await importCrossref([a], {
      items: [
        {
          DOI: '10.5555/x.1',
          'update-to': [
            { DOI: '10.5555/w.1', type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2020, 1, 1]] } },
          ],
        },
      ],
    });
    await importCrossref([b], {
      items: [
        {
          DOI: '10.5555/x.2',
          'update-to': [
            { DOI: '10.5555/w.2', type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2020, 1, 1]] } },
          ],
        },
      ],
    });
    const fromA = await page(appOf(a), undefined);
    const r = await get(appOf(b), `/v2.2/updates/changes?after=${fromA.next}`);
    const e = await errorOf(r);
    expect(e.status).toBe(410);
    expect(e.body.error).toBe('CURSOR_EXPIRED');
    expect(String(e.body.message)).toContain('sync again from the start');
    expect((await page(appOf(b), undefined)).changes.map((c) => c.doi)).toEqual(['10.5555/w.2']);
    await Promise.all([a.close(), b.close()]);
  });

  test('a cursor older than the feed keeps withdrawals answers 410; a fresh one does not', async () => {
    const store = openStore('keep', 0);
    const app = appOf(store);
    const retract = (w: string, n: string) => ({
      items: [
        {
          DOI: n,
          'update-to': [{ DOI: w, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2021, 2, 3]] } }],
        },
      ],
    });
    await importCrossref([store], retract('10.5555/k.1', '10.5555/kn.1'));
    const old = await page(app, undefined);
    expect(old.changes).toHaveLength(1);
    await importCrossref([store], { items: [{ DOI: '10.5555/k.1', 'updated-by': [] }] });
    await importCrossref([store], retract('10.5555/k.2', '10.5555/kn.2'));
    const e = await errorOf(await get(app, `/v2.2/updates/changes?after=${old.next}`));
    expect(e.status).toBe(410);
    expect(String(e.body.message)).toContain('older than the change feed keeps');
    // a full sync no longer carries the pruned withdrawal, and its cursor is good
    const full = await page(app, undefined);
    expect(full.changes.map((c) => c.doi)).toEqual(['10.5555/k.2']);
    expect((await page(app, full.next)).changes).toEqual([]);
    await store.close();
  });

  test('a full sync begun after pruning reads to its end page by page, however old its rows; one begun before a withdrawal it may miss answers 410', async () => {
    // kept 0 ms: every commit is pruned by the next one's end (its own, even)
    const store = openStore('prune-full', 0);
    const app = appOf(store);
    const retract = (w: string, n: string) => ({
      items: [
        {
          DOI: n,
          'update-to': [{ DOI: w, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2021, 2, 3]] } }],
        },
      ],
    });
    await importSample([store]); // commit 1: the sample's works, pruned (nothing withdrawn)
    await importCrossref([store], retract('10.5555/p.1', '10.5555/pn.1')); // commit 2
    await importCrossref([store], retract('10.5555/p.2', '10.5555/pn.2')); // commit 3
    await importCrossref([store], { items: [{ DOI: '10.5555/p.1', 'updated-by': [] }] }); // commit 4: p.1 withdrawn, and pruned
    store.updatesIndex.refresh(true);
    expect(store.changeFeed.head()).toMatchObject({ commit: 4, prunedCommit: 4, withdrawnCommit: 4 });
    // the full sync: small pages through the first commit's rows, to the end
    const state = new Map<string, UpdateObject[]>();
    const full = await sync([app], state, undefined, 250);
    expect(full.seen.length).toBe(store.updatesIndex.size);
    expect(state.has('10.5555/p.1')).toBe(false);
    expect(state.has('10.5555/p.2')).toBe(true);
    expect(state).toEqual(await updatesApi(app, [...state.keys(), '10.5555/p.1']));
    // polling on from its end: nothing more, and no 410
    expect((await page(app, full.cursor)).changes).toEqual([]);

    // a sync under way when a work it has read is withdrawn, and that withdrawal pruned before it goes on: 410
    const first = await page(app, undefined, 1);
    expect(first.more).toBe(true);
    const read = first.changes[0]!.doi;
    // the next Retraction Watch file no longer lists it (commit 5, pruned at its end)
    const rest = ROWS.filter((r) => !r.toLowerCase().includes(read.toLowerCase()));
    expect(rest.length).toBeLessThan(ROWS.length);
    await importUpdates([store], 'retraction-watch-csv', [
      Buffer.from(csv(rest)),
    ] as unknown as AsyncIterable<Uint8Array>);
    expect(store.changeFeed.head()).toMatchObject({ commit: 5, withdrawnCommit: 5 });
    const e = await errorOf(await get(app, `/v2.2/updates/changes?after=${first.next}&limit=1`));
    expect(e.status).toBe(410);
    expect(String(e.body.message)).toContain('older than the change feed keeps');
    // a sync begun now reads to its end again
    const again = await sync([app], new Map(), undefined, 500);
    expect(again.seen).not.toContain(read.toLowerCase());
    await store.close();
  });

  test('bad requests: a key, a cursor, a limit and parameters the route does not know; other methods', async () => {
    const store = openStore('bad');
    const app = appOf(store);
    expect((await get(app, '/v2.2/updates/changes', {})).status).toBe(401);
    expect((await get(app, '/v2.2/updates/changes', { 'x-api-key': 'nope' })).status).toBe(401);
    for (const [query, words] of [
      ['after=xyz', 'not a cursor'],
      [`after=${Buffer.from('1.5.0.0000000000000000').toString('base64url')}`, 'not a cursor'],
      ['limit=0', 'limit must be'],
      ['limit=1001', 'limit must be'],
      ['limit=abc', 'limit must be'],
      ['cursor=abc', 'unknown query parameter "cursor"'],
      ['limit=5&limit=6', '"limit" is given twice'],
      ['after=%E0%A4%A', 'malformed percent-encoding'],
    ] as const) {
      const e = await errorOf(await get(app, `/v2.2/updates/changes?${query}`));
      expect(e.status).toBe(400);
      expect(String(e.body.message)).toContain(words);
    }
    const post = await app.handle(
      new Request(`${BASE}/v2.2/updates/changes`, { method: 'POST', headers: { 'x-api-key': KEY } }),
    );
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    // staging without a staging store
    expect((await get(app, '/staging/v2.2/updates/changes')).status).toBe(404);
    await store.close();
  });
});
