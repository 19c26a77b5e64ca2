import { describe, expect, test } from 'bun:test';
import { PageCache, pageKey, type RenderedPage } from '../../../src/http/routes/page-cache.ts';
import { Store } from '../../../src/store/index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { BASE, makeApp } from '../http-support.ts';

/**
 * The status pages' cache (src/http/routes/page-cache.ts): what drops a page, what empties the cache, when it must not
 * serve; and, through the app, that a page served from it is the page a fresh render gives.
 */

const temp = storePerTest(1 << 26);

const page = (text: string): RenderedPage => ({ body: Buffer.from(text), etag: `W/"${text}"`, headers: new Headers() });
const deposit = (s: Store, doi: string, accessType = 'open') => s.applyFilesSync([preparedFile([{ doi, accessType }])]);

describe('PageCache', () => {
  test('a deposit drops the pages (both formats) of its DOIs only', () => {
    deposit(temp.store, '10.1234/a');
    deposit(temp.store, '10.1234/b');
    const cache = new PageCache(temp.store);
    expect(cache.usable()).toBe(true);
    for (const k of [pageKey('html', '10.1234/a'), pageKey('json', '10.1234/a'), pageKey('html', '10.1234/b')])
      cache.set(k, page(k));
    deposit(temp.store, '10.1234/A', 'paid');
    expect(cache.usable()).toBe(true);
    expect(cache.get(pageKey('html', '10.1234/a'))).toBeUndefined();
    expect(cache.get(pageKey('json', '10.1234/a'))).toBeUndefined();
    expect(cache.get(pageKey('html', '10.1234/b'))?.etag).toBe(`W/"${pageKey('html', '10.1234/b')}"`);
  });

  test('a commit by another writer (not told to this store) empties the cache at the next check', async () => {
    deposit(temp.store, '10.1234/a');
    const cache = new PageCache(temp.store);
    cache.set(pageKey('html', '10.1234/b'), page('b'));
    // a second Store on the same file stands for another process: its commits are not told to `store`
    const other = Store.open(temp.dir.path, 'production', { mapSizeBytes: 1 << 26 });
    deposit(other, '10.1234/c');
    await Bun.sleep(1); // lmdb-js renews its read snapshot when the event loop turns, as between two requests
    expect(cache.usable()).toBe(true);
    expect(cache.get(pageKey('html', '10.1234/b'))).toBeUndefined();
    // this store's next commit follows the gap: told, it empties the cache again rather than trust its numbers
    cache.set(pageKey('html', '10.1234/b'), page('b'));
    deposit(other, '10.1234/d');
    deposit(temp.store, '10.1234/e');
    expect(cache.size).toBe(0);
    await other.close();
  });

  test('an update import empties the cache', async () => {
    const cache = new PageCache(temp.store);
    cache.set(pageKey('html', '10.1234/x'), page('x'));
    const header = 'Record ID,URLS,RetractionDate,RetractionDOI,OriginalPaperDOI,RetractionNature,Reason';
    async function* csv() {
      yield Buffer.from(`${header}\n1,,1/2/2020 0:00,10.4444/n,10.1234/zz,Retraction,+Error;\n`);
    }
    await importUpdates([temp.store], 'retraction-watch-csv', csv());
    expect(cache.usable()).toBe(true);
    expect(cache.size).toBe(0);
  });

  test('while this process has a commit it has not told, the cache must not be used', async () => {
    const cache = new PageCache(temp.store);
    const done = temp.store.applyFiles([preparedFile([{ doi: '10.1234/p', accessType: 'open' }])]);
    const during = cache.usable();
    await done;
    expect(during).toBe(false);
    expect(cache.usable()).toBe(true);
  });

  test('bounded in bytes: the least recently used page goes first', () => {
    const cache = new PageCache(temp.store, 3 * (1000 + 10 + 200));
    const big = (c: string) => page(c.repeat(1000));
    cache.set('k1', big('1'));
    cache.set('k2', big('2'));
    cache.set('k3', big('3'));
    expect(cache.get('k1')).toBeDefined(); // k1 is now the most recently used
    cache.set('k4', big('4'));
    expect(cache.get('k2')).toBeUndefined();
    expect([cache.get('k1'), cache.get('k3'), cache.get('k4')].every((p) => p !== undefined)).toBe(true);
    cache.set('huge', page('x'.repeat(10_000)));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(3);
  });
});

describe('through the app', () => {
  test('a page served again (from the cache) is byte for byte the page a fresh app renders; a deposit shows at once', async () => {
    deposit(temp.store, '10.1234/served', 'paid');
    const app = makeApp({ production: { store: temp.store } });
    const get = async (a: ReturnType<typeof makeApp>, path: string) => {
      const r = await a.handle(new Request(`${BASE}${path}`));
      return { status: r.status, etag: r.headers.get('etag'), text: await r.text() };
    };
    for (const path of ['/doi/10.1234/served', '/doi/10.1234/SERVED?format=json']) {
      const first = await get(app, path);
      const second = await get(app, path);
      const fresh = await get(makeApp({ production: { store: temp.store } }), path);
      expect(second).toEqual(first);
      expect(fresh).toEqual(first);
      expect(first.status).toBe(200);
    }
    deposit(temp.store, '10.1234/served', 'open');
    const after = await get(app, '/doi/10.1234/served');
    expect(after.text).toContain('paid access → open access');
    expect(after).toEqual(await get(makeApp({ production: { store: temp.store } }), '/doi/10.1234/served'));
  });
});
