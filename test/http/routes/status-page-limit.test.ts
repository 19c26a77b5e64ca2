import { describe, expect, test } from 'bun:test';
import type { RateSettings } from '../../../src/config/index.ts';
import { startServer } from '../../../src/http/index.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { makeApp } from '../http-support.ts';

/**
 * The status page's limit per client address (`[statusPage] rateLimit`, `server.trustedProxies`), over a real
 * port: the socket's peer (127.0.0.1) is the reader unless it is a trusted proxy. A burst of 2 at a rate of one
 * page in 1,000 s: the third page within a test is refused whatever the machine's speed.
 */

const s = storePerTest();
const RATE: RateSettings = { perSecond: 0.001, burst: 2 };

async function served<T>(
  over: { statusPageRate?: RateSettings; trustedProxies?: string[] },
  use: (get: (path: string, headers?: Record<string, string>) => Promise<Response>) => Promise<T>,
): Promise<T> {
  const app = makeApp({ production: { store: s.store } }, over);
  const server = startServer(app, '127.0.0.1', 0);
  try {
    return await use((path, headers = {}) => fetch(`${server.url}${path}`, { headers }));
  } finally {
    await server.stop();
  }
}

describe('the status page limit per reader', () => {
  test('over the burst: 429 with Retry-After, as a page for a browser and as JSON for JSON', async () => {
    await served({ statusPageRate: RATE }, async (get) => {
      for (let i = 0; i < 2; i++) expect((await get('/doi/10.5555/unknown')).status).toBe(404);
      const page = await get('/doi/10.5555/unknown');
      expect(page.status).toBe(429);
      // a token comes every 1,000 s: the wait is that less the moments the first pages took (never a whole 100 s)
      const retry = page.headers.get('retry-after')!;
      expect(retry).toMatch(/^[0-9]+$/);
      expect(Number(retry)).toBeGreaterThan(900);
      expect(Number(retry)).toBeLessThanOrEqual(1000);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const html = await page.text();
      expect(html).toContain('<h1>Too many pages asked</h1>');
      expect(html).toContain(`try again in ${retry} seconds`);
      const json = await get('/doi/10.5555/unknown?format=json');
      expect(json.status).toBe(429);
      const again = json.headers.get('retry-after')!;
      expect(Number(again)).toBeLessThanOrEqual(Number(retry));
      expect(await json.json()).toEqual({
        statusCode: 429,
        error: 'RATE_LIMITED',
        message: `too many pages asked from your address; retry in ${again} s`,
      });
      // the APIs are not limited by it, and /metrics counts the refusals
      expect((await get('/livez')).status).toBe(200);
      const metrics = await (await get('/metrics')).text();
      expect(metrics).toContain('doi_holdings_status_page_rate_limited_total 2');
      expect(metrics).toContain('doi_holdings_status_page_readers 1');
    });
  });

  test('without trusted proxies, X-Forwarded-For changes nothing: the socket is the reader', async () => {
    await served({ statusPageRate: RATE }, async (get) => {
      const statuses = [];
      for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.3'])
        statuses.push((await get('/doi/10.5555/x', { 'x-forwarded-for': client })).status);
      expect(statuses).toEqual([404, 404, 429]);
    });
  });

  test('behind a trusted proxy, each forwarded client has its own bucket', async () => {
    await served({ statusPageRate: RATE, trustedProxies: ['127.0.0.1'] }, async (get) => {
      const as = async (client: string) => (await get('/doi/10.5555/x', { 'x-forwarded-for': client })).status;
      expect([await as('203.0.113.1'), await as('203.0.113.1'), await as('203.0.113.1')]).toEqual([404, 404, 429]);
      expect(await as('203.0.113.2')).toBe(404);
      // a client cannot pose as another by writing the header itself: the proxy's entry is the right-most
      expect(await as('203.0.113.2, 203.0.113.1')).toBe(429);
      const metrics = await (await get('/metrics')).text();
      expect(metrics).toContain('doi_holdings_status_page_readers 2');
    });
  });

  test('without a limit, every page is answered and no limit series is shown', async () => {
    await served({}, async (get) => {
      for (let i = 0; i < 5; i++) expect((await get('/doi/10.5555/x')).status).toBe(404);
      expect(await (await get('/metrics')).text()).not.toContain('doi_holdings_status_page_rate_limited_total');
    });
  });
});
