import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { ensureDebianTool, INSTALL_TIMEOUT_MS } from './debian.ts';

/**
 * Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core (which ships no
 * browser of its own). On a fresh machine `ensureChromium` installs the package with apt-get; that needs root and
 * the network and can take minutes, so call it from a beforeAll with a generous timeout (INSTALL_TIMEOUT_MS).
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
export { INSTALL_TIMEOUT_MS };

/** Installs Debian's chromium package when /usr/bin/chromium is missing; throws, saying why, when it cannot. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  ensureDebianTool('chromium', 'chromium');
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`installed Debian's chromium, but ${CHROMIUM_PATH} is still missing`);
}

/** Launches the system Chromium headless through playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
