import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createConsoleApp, startServer } from '../../src/http/index.ts';
import { type ConsoleFixture, consoleFixture, fixtureConsole, HOSTILE_KEY } from '../console/console-fixture.ts';
import { KEY, makeApp } from '../http/http-support.ts';
import { ensureChromium, INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';

/**
 * The operator console in headless Chromium (test/support/chromium.ts), served on its own listener over real stores
 * (test/console/console-fixture.ts): its CSP enforced with nothing blocked that the page needs and no hostile name
 * run, axe-core finding no violation at desktop and phone widths, no sideways scrolling on a phone. Screenshots go to
 * test/artifacts/ (ignored by git); docs/console-desktop.png and docs/console-phone.png are copies of them.
 */

const ARTIFACTS = join(import.meta.dir, '..', 'artifacts');
const AXE_SOURCE = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
  'utf8',
);

let f: ConsoleFixture;
let server: ReturnType<typeof startServer>;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
/** Contexts that ignore the page's CSP, so that axe-core can be injected; used for nothing else. */
let axeDesktop: BrowserContext;
let axePhone: BrowserContext;

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const DESKTOP = { viewport: { width: 1280, height: 900 } };

beforeAll(async () => {
  ensureChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  f = await consoleFixture();
  // a few real calls to the platform's Entitlement API, so that its row has figures
  const app = makeApp({ production: { store: f.production } }, { entitlements: f.entitlements });
  for (let i = 0; i < 3; i++) {
    const r = await app.handle(
      new Request('http://localhost/v2.2/entitlements', {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ org: { ipv4: `192.0.2.${10 + i}` }, dois: ['10.5555/paid-1'] }),
      }),
    );
    expect(r.status).toBe(200);
  }
  server = startServer(createConsoleApp(fixtureConsole(f)), '127.0.0.1', 0);
  browser = await launchChromium();
  desktop = await browser.newContext(DESKTOP);
  phone = await browser.newContext(PHONE);
  axeDesktop = await browser.newContext({ ...DESKTOP, bypassCSP: true });
  axePhone = await browser.newContext({ ...PHONE, bypassCSP: true });
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await f?.close();
});

interface Visit {
  page: Page;
  status: number;
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
}

async function visit(ctx: BrowserContext, path: string): Promise<Visit> {
  const page = await ctx.newPage();
  const v: Visit = { page, status: 0, consoleErrors: [], pageErrors: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') v.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => v.pageErrors.push(String(e)));
  page.on('dialog', (d) => {
    v.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss().catch(() => {});
  });
  const response = await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
  if (!response) throw new Error(`no response for ${path}`);
  v.status = response.status();
  return v;
}

const hostilePath = `/console/production/files/${HOSTILE_KEY.split('/').map(encodeURIComponent).join('/')}`;
const PAGES = () => [
  { name: 'overview', path: '/console' },
  { name: 'staging', path: '/console/staging' },
  { name: 'file report', path: `/console/production/files/${f.rejectedFile.key}` },
  { name: 'quarantined file', path: hostilePath },
  { name: 'not found', path: '/console/nowhere', status: 404 },
];

describe('the operator console in a browser', () => {
  test('its style applies under its CSP, nothing is blocked, and no hostile name runs', async () => {
    for (const p of PAGES()) {
      const v = await visit(desktop, p.path);
      expect({ path: p.path, status: v.status }).toEqual({ path: p.path, status: p.status ?? 200 });
      const header = await v.page
        .locator('header.site')
        .evaluate((e) => (globalThis as any).getComputedStyle(e).backgroundColor as string);
      expect(header).toBe('rgb(27, 31, 36)');
      expect(await v.page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
      // the 404 page's own status is logged as a failed load; nothing else may be
      const expected =
        p.status === 404 ? ['Failed to load resource: the server responded with a status of 404 (Not Found)'] : [];
      expect(v.consoleErrors).toEqual(expected);
      expect(v.pageErrors).toEqual([]);
      expect(v.dialogs).toEqual([]);
      await v.page.close();
    }
  });

  test('the hostile file name shows as text, and its link leads to its report', async () => {
    const v = await visit(desktop, '/console');
    const link = v.page.locator('#quarantined ~ div a').first();
    expect(await link.innerText()).toBe(HOSTILE_KEY);
    await Promise.all([v.page.waitForURL((u) => u.pathname.startsWith('/console/production/files/')), link.click()]);
    expect(await v.page.locator('h1').innerText()).toBe(HOSTILE_KEY);
    expect(await v.page.locator('dd').first().innerText()).toBe('quarantined');
    expect(await v.page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    await v.page.close();
  });

  test('the chart: 30 bars with their titles, its name read by assistive technology', async () => {
    const v = await visit(desktop, '/console');
    const svg = v.page.locator('svg[role="img"]');
    expect(await svg.locator('rect.bar').count()).toBe(30);
    expect(await v.page.locator('#days-chart-title').textContent()).toStartWith('Files applied per day');
    const box = await svg.boundingBox();
    expect(box !== null && box.width > 600 && box.height > 100).toBe(true);
    await v.page.close();
  });

  test('axe-core finds no violation at desktop and phone widths', async () => {
    const found: string[] = [];
    let checked = 0;
    for (const [width, ctx] of [
      ['desktop', axeDesktop],
      ['phone', axePhone],
    ] as const) {
      for (const p of PAGES()) {
        const v = await visit(ctx, p.path);
        // the console's CSP allows no script: injected through a context that bypasses it, then run
        await v.page.evaluate(AXE_SOURCE);
        const result = await v.page.evaluate(async () => {
          const r = await (globalThis as any).axe.run();
          return {
            passes: r.passes.length as number,
            violations: r.violations.map((x: any) => `${x.id} [${x.impact}] on ${x.nodes.length} element(s)`),
          };
        });
        expect(result.passes).toBeGreaterThan(10); // axe did run on this page
        for (const x of result.violations as string[]) found.push(`${p.name} (${width}): ${x}`);
        checked++;
        await v.page.close();
      }
    }
    expect(checked).toBe(2 * PAGES().length);
    expect(found).toEqual([]);
  });

  test('screenshots at 1280 and 390 px; no sideways scrolling on a phone', async () => {
    const shots = [
      { file: 'console-desktop.png', ctx: desktop, path: '/console', width: 1280 },
      { file: 'console-phone.png', ctx: phone, path: '/console', width: 390 },
      {
        file: 'console-file-desktop.png',
        ctx: desktop,
        path: `/console/production/files/${f.rejectedFile.key}`,
        width: 1280,
      },
      {
        file: 'console-file-phone.png',
        ctx: phone,
        path: `/console/production/files/${f.rejectedFile.key}`,
        width: 390,
      },
      { file: 'console-quarantined-phone.png', ctx: phone, path: hostilePath, width: 390 },
    ];
    for (const s of shots) {
      const v = await visit(s.ctx, s.path);
      expect(v.status).toBe(200);
      expect(await v.page.evaluate(() => (globalThis as any).innerWidth as number)).toBe(s.width);
      const scrollWidth = await v.page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth as number,
      );
      expect({ file: s.file, scrollWidth }).toEqual({ file: s.file, scrollWidth: s.width });
      const path = join(ARTIFACTS, s.file);
      rmSync(path, { force: true });
      await v.page.screenshot({ path, fullPage: true });
      const png = readFileSync(path);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(5_000);
      await v.page.close();
    }
  });
});
