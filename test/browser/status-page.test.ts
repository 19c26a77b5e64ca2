import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer } from '../../src/http/server.ts';
import { Store } from '../../src/store/index.ts';
import { importSample, makeApp } from '../http/http-support.ts';
import { ensureChromium, INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';
import { tempDir } from '../support/fixtures.ts';
import { preparedFile } from '../support/prepared-file.ts';

/**
 * The document status page end to end: the real HTTP server on a free port over real LMDB stores (production and
 * staging) holding the real Retraction Watch sample and holdings deposited with known dates, loaded in headless
 * Chromium (test/support/chromium.ts). Checks what a reader sees, escaping of hostile DOIs with the page's CSP
 * enforced, accessibility (axe-core), phone and print layout. Screenshots and a PDF go to test/artifacts/ (ignored
 * by git) for a person to look at.
 */

const ARTIFACTS = join(import.meta.dir, '..', 'artifacts');
const AXE_SOURCE = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
  'utf8',
);

// From the real sample (read with Python's csv module): a Correction (2022-12-07, notice 10.3892/ijo.2022.5463)
// then a Retraction (2023-08-04, notice 10.3892/ijo.2023.5552).
const RETRACTED_DOI = '10.3892/ijo.2017.3871';
// Read from the CSV with Python's csv module: record 70128 is the only row for this OriginalPaperDOI and its
// RetractionNature is "Correction" (2014-12-12, notice 10.1093/brain/awu345).
const CORRECTED_DOI = '10.1093/brain/awu038';
// Read from the CSV with Python's csv module: record 72430 is the only row, RetractionNature "Reinstatement".
const REINSTATED_DOI = '10.2478/jtim-2022-0090';
/** Not in the sample: only the holdings deposited below. */
const HOLDINGS_DOI = '10.5555/status-page-e2e.holdings';
/** Deposited in the staging store only. */
const STAGING_DOI = '10.5555/status-page-e2e.staging-only';
const UNKNOWN_DOI = '10.5555/status-page-e2e.never-deposited';
/** Holds spaces, which no DOI may (a deposit rejects it): requested, it is a 400 page that shows what was sent. */
const XSS_SENT = '10.1000/"><script>window.__xss=1</script><img src=x onerror="window.__xss=2">';
/** The same attack without whitespace (`/` separates HTML attributes): a valid DOI, deposited, so a 200 page. */
const XSS_DOI = '10.1000/"><script>window.__xss=1</script><img/src="x"/onerror="window.__xss=2">';
const JS_DOI = '10.1000/javascript:alert(1)';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 2, 10, 8, 15);
const RETRACTED_HELD_AT = Date.UTC(2024, 0, 15, 12, 0);

/** Holdings changes of HOLDINGS_DOI on two platforms, oldest first, one deposit file each. */
const HOLDING_STEPS: { platform: string; time: number; line: object }[] = [
  {
    platform: 'acme',
    time: T0,
    line: {
      doi: HOLDINGS_DOI,
      accessType: 'paid',
      vor: [{ url: 'https://acme.example/v1.pdf', contentType: 'application/pdf' }],
    },
  },
  {
    platform: 'acme',
    time: T0 + DAY,
    line: {
      doi: HOLDINGS_DOI,
      accessType: 'open',
      vor: [{ url: 'https://acme.example/v2.html', contentType: 'text/html' }],
    },
  },
  { platform: 'beta', time: T0 + 2 * DAY, line: { doi: HOLDINGS_DOI, accessType: 'free' } },
  { platform: 'beta', time: T0 + 3 * DAY, line: { doi: HOLDINGS_DOI, deleted: true } },
  { platform: 'acme', time: T0 + 4 * DAY, line: { doi: HOLDINGS_DOI, deleted: true } },
  {
    platform: 'acme',
    time: T0 + 5 * DAY,
    line: {
      doi: HOLDINGS_DOI,
      accessType: 'open',
      vor: [{ url: 'https://acme.example/v3.html', contentType: 'text/html' }],
    },
  },
];

let dir: ReturnType<typeof tempDir> | undefined;
let production: Store | undefined;
let staging: Store | undefined;
let server: ReturnType<typeof startServer> | undefined;
let browser: Browser | undefined;
let desktop: BrowserContext;
let phone: BrowserContext;
/** Contexts that ignore the page's CSP, so that axe-core can be injected; used for nothing else. */
let axeDesktop: BrowserContext;
let axePhone: BrowserContext;
/** The bucket keys of every deposit file applied: none may reach a page. */
const depositKeys: string[] = [];

/** Applies one deposit file in the order written, whatever its time (as --ingest does); throws unless every line of it was applied. */
function deposit(store: Store, lines: object[], opts: { platform?: string; time: number }): void {
  const file = { ...preparedFile(lines, opts), inOrderGiven: true };
  const [status] = store.applyFilesSync([file]);
  if (status?.status !== 'applied' || status.entry.counts?.rejected)
    throw new Error(`deposit not applied: ${JSON.stringify(status)}`);
  depositKeys.push(file.key);
}

beforeAll(async () => {
  ensureChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = tempDir('doi-holdings-browser-');
  production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 28 });
  await importSample([production, staging]);
  deposit(production, [{ doi: RETRACTED_DOI, accessType: 'paid' }], { time: RETRACTED_HELD_AT });
  for (const s of HOLDING_STEPS) deposit(production, [s.line], { platform: s.platform, time: s.time });
  deposit(
    production,
    [
      { doi: XSS_DOI, accessType: 'paid' },
      { doi: JS_DOI, accessType: 'open' },
    ],
    { time: T0 },
  );
  deposit(staging, [{ doi: STAGING_DOI, accessType: 'free' }], { time: T0 });
  server = startServer(makeApp({ production: { store: production }, staging: { store: staging } }), '127.0.0.1', 0);
  browser = await launchChromium();
  desktop = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  phone = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
  });
  axeDesktop = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  axePhone = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    bypassCSP: true,
  });
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await production?.close();
  await staging?.close();
  dir?.remove();
});

interface Visit {
  page: Page;
  status: number;
  headers: Record<string, string>;
  /** console messages of type error (CSP violations are reported there) */
  consoleErrors: string[];
  /** uncaught exceptions in the page */
  pageErrors: string[];
  /** alert/confirm/prompt dialogs opened (each dismissed) */
  dialogs: string[];
}

const statusPath = (doi: string, prefix = '') => `${prefix}/doi/${encodeURIComponent(doi)}`;

/** Opens `path` in a new page of `ctx`, recording console errors, page errors and dialogs from the start. */
async function visit(ctx: BrowserContext, path: string): Promise<Visit> {
  const page = await ctx.newPage();
  const v: Visit = { page, status: 0, headers: {}, consoleErrors: [], pageErrors: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') v.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => v.pageErrors.push(String(e)));
  page.on('dialog', (d) => {
    v.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss().catch(() => {});
  });
  const response = await page.goto(`${server!.url}${path}`, { waitUntil: 'load' });
  if (!response) throw new Error(`no response for ${path}`);
  v.status = response.status();
  v.headers = response.headers();
  return v;
}

const isCspViolation = (message: string) => /Content Security Policy/i.test(message);
const bodyText = (page: Page) => page.innerText('body');
const h3s = (page: Page) => page.locator('ol.timeline > li.event h3').allInnerTexts();

describe('the document status page in a browser', () => {
  test('a retracted DOI of the real sample: Retracted badge, newest first, reasons and notice links', async () => {
    const v = await visit(desktop, statusPath(RETRACTED_DOI));
    const { page } = v;
    expect(v.status).toBe(200);
    expect(v.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.locator('section.status p.badge').innerText()).toBe('Retracted');
    expect(await page.title()).toBe(`Retracted: ${RETRACTED_DOI} · Document status`);
    const h1Link = page.locator('h1 a');
    expect(await h1Link.innerText()).toBe(RETRACTED_DOI);
    expect(await h1Link.getAttribute('href')).toBe(`https://doi.org/${RETRACTED_DOI}`);
    // newest first: the holding deposited in 2024, the Retraction of 2023, the Correction of 2022
    expect(await h3s(page)).toEqual(['Added by acme', 'Retraction', 'Correction']);
    const notices = page.locator('ol.timeline > li.event.notice');
    expect(await notices.locator('h3').allInnerTexts()).toEqual(['Retraction', 'Correction']);
    expect(await notices.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual([
      '2023-08-04',
      '2022-12-07',
    ]);
    const retraction = notices.first();
    expect(await retraction.innerText()).toContain('Unreliable Data');
    expect(await retraction.innerText()).toContain('Source: Retraction Watch');
    const noticeLink = retraction.locator('p a', { hasText: '10.3892/ijo.2023.5552' });
    expect(await noticeLink.count()).toBe(1);
    expect(await noticeLink.getAttribute('href')).toBe('https://doi.org/10.3892/ijo.2023.5552');
    expect(await notices.nth(1).innerText()).toContain('10.3892/ijo.2022.5463');
    const text = await bodyText(page);
    expect(text).toContain('Unreliable Data');
    expect(text).toContain('10.3892/ijo.2023.5552');
    expect(text).toContain('Latest deciding notice: 2023-08-04, Retraction Watch.');
    expect(await page.locator('ul.holdings > li').allInnerTexts()).toEqual(['acme: paid access']);
    expect(await page.locator('.staging').count()).toBe(0);
    expect(v.consoleErrors).toEqual([]);
    expect(v.pageErrors).toEqual([]);
    await page.close();
  });

  test('holdings changes on two platforms: titles, order, dates and access, and no deposit file names', async () => {
    const v = await visit(desktop, statusPath(HOLDINGS_DOI));
    const { page } = v;
    expect(v.status).toBe(200);
    expect(await page.locator('section.status p.badge').innerText()).toBe('No known updates');
    expect(await h3s(page)).toEqual([
      'Added again by acme',
      'Removed by acme',
      'Removed by beta',
      'Added by beta',
      'Changed by acme',
      'Added by acme',
    ]);
    const items = page.locator('ol.timeline > li.event');
    expect(await items.count()).toBe(HOLDING_STEPS.length);
    expect(await page.locator('ol.timeline > li.event.holding').count()).toBe(HOLDING_STEPS.length);
    const newestFirst = HOLDING_STEPS.map((s) => s.time).reverse();
    expect(await items.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual(
      newestFirst.map((t) => new Date(t).toISOString()),
    );
    expect(await items.locator('time').allInnerTexts()).toEqual(
      newestFirst.map(
        (t) => `${new Date(t).toISOString().slice(0, 10)} ${new Date(t).toISOString().slice(11, 16)} UTC`,
      ),
    );
    const detail = async (i: number) => (await items.nth(i).locator('p').allInnerTexts()).join(' | ');
    expect(await detail(0)).toBe('Access: open access');
    expect(await detail(1)).toBe('Was: open access');
    expect(await detail(2)).toBe('Was: free to read');
    expect(await detail(3)).toBe('Access: free to read');
    expect(await detail(4)).toBe('Access: paid access → open access | Links to the full text changed');
    expect(await detail(5)).toBe('Access: paid access');
    expect(await page.locator('ul.holdings > li').allInnerTexts()).toEqual(['acme: open access', 'beta: removed']);
    // deposit file names (bucket keys) are never shown, not even in markup
    const html = await page.content();
    const text = await bodyText(page);
    expect(depositKeys.length).toBeGreaterThan(HOLDING_STEPS.length);
    for (const key of depositKeys) {
      expect(html).not.toContain(key);
      expect(text).not.toContain(key);
      expect(html).not.toContain(key.split('/')[1]!.replace('.jsonl.gz', ''));
    }
    expect(html).not.toContain('.jsonl');
    expect(html).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    expect(v.consoleErrors).toEqual([]);
    expect(v.pageErrors).toEqual([]);
    await page.close();
  });

  test('a correction-only DOI shows Corrected and a reinstated DOI is not shown as Retracted', async () => {
    const corrected = await visit(desktop, statusPath(CORRECTED_DOI));
    expect(corrected.status).toBe(200);
    expect(await corrected.page.locator('section.status p.badge').innerText()).toBe('Corrected');
    expect(await h3s(corrected.page)).toEqual(['Correction']);
    expect(await corrected.page.locator('time').getAttribute('datetime')).toBe('2014-12-12');
    const correctedText = await bodyText(corrected.page);
    expect(correctedText).toContain('10.1093/brain/awu345');
    expect(correctedText).not.toMatch(/Retracted/i);
    expect(await corrected.page.title()).toStartWith('Corrected: ');
    await corrected.page.close();

    const reinstated = await visit(desktop, statusPath(REINSTATED_DOI));
    expect(reinstated.status).toBe(200);
    const badge = await reinstated.page.locator('section.status p.badge').innerText();
    expect(badge).not.toBe('Retracted');
    expect(badge).toBe('Reinstated');
    expect(await reinstated.page.locator('section.status').getAttribute('class')).not.toContain('tone-alert');
    expect(await reinstated.page.locator('li.event.notice').count()).toBe(1);
    expect(await reinstated.page.locator('li.event.notice').getAttribute('class')).not.toContain('tone-alert');
    expect(await bodyText(reinstated.page)).not.toMatch(/Retracted/i);
    await reinstated.page.close();
  });

  test('hostile DOIs are shown as text: no script runs, no element is injected, no dialog opens (CSP enforced)', async () => {
    const cases = [
      { path: statusPath(XSS_DOI), status: 200, shown: XSS_DOI },
      { path: statusPath(XSS_SENT), status: 400, shown: JSON.stringify(XSS_SENT) },
      {
        path: '/doi/%3Cscript%3Ewindow.__xss%3D3%3C%2Fscript%3E',
        status: 400,
        shown: '"<script>window.__xss=3</script>"',
      },
      { path: statusPath(JS_DOI), status: 200, shown: JS_DOI },
    ];
    for (const c of cases) {
      const v = await visit(desktop, c.path);
      const { page } = v;
      expect({ path: c.path, status: v.status }).toEqual({ path: c.path, status: c.status });
      expect(v.headers['content-security-policy']).toContain("default-src 'none'");
      expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('[onerror]').count()).toBe(0);
      expect(await bodyText(page)).toContain(c.shown);
      if (c.status === 200) {
        expect(await page.locator('h1 a').innerText()).toBe(c.shown);
        expect(await page.locator('h1 a').getAttribute('href')).toStartWith('https://doi.org/10.1000/');
      } else {
        expect(await page.locator('h1').innerText()).toBe('Not a DOI');
        expect(await page.locator('code').first().innerText()).toBe(c.shown);
      }
      // every link goes to http(s): the `javascript:` in a DOI stays inside a doi.org address
      const protocols = await page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll('a')].map((a: any) => a.protocol as string),
      );
      expect(protocols.filter((p) => p !== 'http:' && p !== 'https:')).toEqual([]);
      await page.waitForTimeout(100); // an onerror handler or a timer would have fired by now
      expect(v.dialogs).toEqual([]);
      expect(v.pageErrors).toEqual([]);
      // nothing tried to run, so the CSP had nothing to refuse
      expect(v.consoleErrors.filter(isCspViolation)).toEqual([]);
      await page.close();
    }
    // control: where a script does run (CSP bypassed), the probes above see it
    const control = await visit(axeDesktop, statusPath(XSS_DOI));
    await control.page.addScriptTag({ content: 'window.__xss = 1; setTimeout(() => alert("xss"), 0)' });
    await control.page.waitForTimeout(100);
    expect(await control.page.evaluate(() => (globalThis as any).__xss)).toBe(1);
    expect(await control.page.locator('script').count()).toBe(1);
    expect(control.dialogs).toEqual(['alert: xss']);
    await control.page.close();
  });

  test('a normal page raises no CSP violation, and the CSP does refuse an inline script (control)', async () => {
    const v = await visit(desktop, statusPath(RETRACTED_DOI));
    const { page } = v;
    expect(v.headers['content-security-policy']).toContain("default-src 'none'");
    // the inline style is allowed by its hash: it applies (the header bar is dark)
    expect(
      await page.locator('header.site').evaluate((e) => (globalThis as any).getComputedStyle(e).backgroundColor),
    ).toBe('rgb(27, 31, 36)');
    expect(v.consoleErrors).toEqual([]);
    // control: an inline script is refused, and the refusal is seen by the listener the checks above rely on
    await page.addScriptTag({ content: 'window.__probe = 1' }).catch(() => {});
    expect(await page.evaluate(() => (globalThis as any).__probe)).toBeUndefined();
    expect(v.consoleErrors.filter(isCspViolation).length).toBeGreaterThan(0);
    await page.close();
  });

  test('axe-core finds no serious or critical violation at desktop and phone widths', async () => {
    const pages = [
      { name: 'retracted', path: statusPath(RETRACTED_DOI), status: 200 },
      { name: 'holdings', path: statusPath(HOLDINGS_DOI), status: 200 },
      { name: 'not found', path: statusPath(UNKNOWN_DOI), status: 404 },
      { name: 'not a DOI', path: '/doi/not-a-doi', status: 400 },
    ];
    const serious: string[] = [];
    const minor: string[] = [];
    for (const [width, ctx] of [
      ['desktop', axeDesktop],
      ['phone', axePhone],
    ] as const) {
      for (const p of pages) {
        const v = await visit(ctx, p.path);
        expect(v.status).toBe(p.status);
        await v.page.addScriptTag({ content: AXE_SOURCE });
        const result = await v.page.evaluate(async () => {
          const r = await (globalThis as any).axe.run();
          return {
            passes: r.passes.length as number,
            violations: r.violations.map((x: any) => ({
              id: x.id as string,
              impact: x.impact as string,
              nodes: x.nodes.length as number,
            })),
          };
        });
        expect(result.passes).toBeGreaterThan(10); // axe did run on this page
        for (const x of result.violations as { id: string; impact: string; nodes: number }[]) {
          const line = `${p.name} (${width}): ${x.id} [${x.impact}] on ${x.nodes} element(s)`;
          if (x.impact === 'serious' || x.impact === 'critical') serious.push(line);
          else minor.push(line);
        }
        await v.page.close();
      }
    }
    console.log(
      `axe on ${pages.length} pages at 2 widths, violations below serious: ${minor.length === 0 ? 'none' : `\n  ${minor.join('\n  ')}`}`,
    );
    expect(serious).toEqual([]);
  });

  test('screenshots at 1280 and 390 px; no horizontal scrolling on a phone', async () => {
    const shots = [
      { file: 'status-retracted-desktop.png', ctx: desktop, doi: RETRACTED_DOI, width: 1280 },
      { file: 'status-retracted-phone.png', ctx: phone, doi: RETRACTED_DOI, width: 390 },
      { file: 'status-holdings-desktop.png', ctx: desktop, doi: HOLDINGS_DOI, width: 1280 },
      { file: 'status-holdings-phone.png', ctx: phone, doi: HOLDINGS_DOI, width: 390 },
    ];
    for (const s of shots) {
      const v = await visit(s.ctx, statusPath(s.doi));
      expect(v.status).toBe(200);
      expect(await v.page.evaluate(() => (globalThis as any).innerWidth as number)).toBe(s.width);
      const scrollWidth = await v.page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth as number,
      );
      expect({ file: s.file, scrollWidth: scrollWidth <= s.width }).toEqual({ file: s.file, scrollWidth: true });
      const path = join(ARTIFACTS, s.file);
      rmSync(path, { force: true });
      await v.page.screenshot({ path, fullPage: true });
      const png = readFileSync(path);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(5_000);
      await v.page.close();
    }
  });

  test('long unbroken text (a 400 page for a long path, a long DOI) does not make a phone scroll sideways', async () => {
    for (const path of [`/doi/${'x'.repeat(160)}`, statusPath(`10.1000/${'y'.repeat(160)}`)]) {
      const v = await visit(phone, path);
      expect(v.status === 400 || v.status === 404).toBe(true);
      const scrollWidth = await v.page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth as number,
      );
      expect({ path, scrollWidth }).toEqual({ path, scrollWidth: 390 });
      await v.page.close();
    }
  });

  test('print: the badge stays visible, and the page prints to a PDF', async () => {
    const v = await visit(desktop, statusPath(RETRACTED_DOI));
    const { page } = v;
    await page.emulateMedia({ media: 'print' });
    expect(await page.evaluate(() => (globalThis as any).matchMedia('print').matches as boolean)).toBe(true);
    const badge = page.locator('section.status p.badge');
    expect(await badge.isVisible()).toBe(true);
    expect(await badge.innerText()).toBe('Retracted');
    const box = await badge.boundingBox();
    expect(box !== null && box.width > 20 && box.height > 10).toBe(true);
    const look = await badge.evaluate((e) => {
      const s = (globalThis as any).getComputedStyle(e);
      return {
        display: s.display as string,
        visibility: s.visibility as string,
        background: s.backgroundColor as string,
        color: s.color as string,
      };
    });
    expect(look.display).not.toBe('none');
    expect(look.visibility).toBe('visible');
    expect(look.background).not.toBe(look.color);
    const path = join(ARTIFACTS, 'status-retracted.pdf');
    rmSync(path, { force: true });
    await page.pdf({
      path,
      format: 'A4',
      printBackground: true,
      margin: { top: '15mm', right: '15mm', bottom: '15mm', left: '15mm' },
    });
    const pdf = readFileSync(path);
    expect(statSync(path).size).toBeGreaterThan(5_000);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await page.close();
  });

  test('/staging/doi/ shows a DOI deposited only in staging, with the staging banner', async () => {
    const v = await visit(desktop, statusPath(STAGING_DOI, '/staging'));
    expect(v.status).toBe(200);
    const banner = v.page.locator('p.staging');
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.innerText()).toStartWith('Staging');
    expect(await v.page.locator('h1 a').innerText()).toBe(STAGING_DOI);
    expect(await h3s(v.page)).toEqual(['Added by acme']);
    expect(await v.page.locator('ul.holdings > li').allInnerTexts()).toEqual(['acme: free to read']);
    await v.page.close();

    const prod = await visit(desktop, statusPath(STAGING_DOI));
    expect(prod.status).toBe(404);
    expect(await prod.page.locator('p.badge').innerText()).toBe('No history known');
    expect(await prod.page.locator('.staging').count()).toBe(0);
    await prod.page.close();
  });
});
