import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core (which ships no
 * browser of its own). On a fresh machine `ensureChromium` installs the package with apt-get; that needs root and
 * the network and can take minutes, so call it from a beforeAll with a generous timeout (INSTALL_TIMEOUT_MS).
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
/** A timeout for the hook that calls ensureChromium: apt-get update plus the install of chromium and its libraries. */
export const INSTALL_TIMEOUT_MS = 600_000;

const INSTALL = 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium';

/** Installs Debian's chromium package when /usr/bin/chromium is missing; throws, saying why, when it cannot. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const run = spawnSync('sh', ['-c', INSTALL], { encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS - 10_000, maxBuffer: 64 * 1024 * 1024 });
  const tail = (s: string | null | undefined) => (s ?? '').trim().split('\n').slice(-15).join('\n');
  if (run.error || run.status !== 0 || !existsSync(CHROMIUM_PATH)) {
    const why = run.error ? run.error.message : run.status !== 0 ? `exit status ${run.status ?? `signal ${run.signal}`}` : `${CHROMIUM_PATH} still missing`;
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM_PATH}; installing it failed (${why}).\n` +
        `Ran: ${INSTALL}\n(needs root and access to a Debian package mirror; install the package by hand otherwise)\n` +
        `${tail(run.stderr) || tail(run.stdout)}`,
    );
  }
}

/** Launches the system Chromium headless through playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
