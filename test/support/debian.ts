import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { REPO } from './fixtures.ts';

/**
 * Tools from Debian packages for the tests, installed when missing rather than skipping the tests that need them.
 * Both helpers need root and a Debian mirror and can take minutes on a fresh machine: call them from a beforeAll
 * whose timeout is INSTALL_TIMEOUT_MS.
 */

/** A timeout for the hook that installs: apt-get update plus a package and its dependencies. */
export const INSTALL_TIMEOUT_MS = 600_000;

/** Where extractDebianPackage unpacks (git-ignored; kept between runs so the download happens once). */
export const DEBIAN_CACHE = join(REPO, '.cache', 'debian');

const UPDATE = 'apt-get update -qq';

/** The absolute path of `binary` on PATH, else undefined. */
export function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir || '.', binary);
    if (dir && existsSync(path)) return path;
  }
  return undefined;
}

/**
 * `binary` from PATH, installing Debian's `pkg` with apt-get first when it is missing; its absolute path. Throws,
 * saying what ran and how it failed, when it cannot. Only for packages whose installation starts no service (see
 * extractDebianPackage for those).
 */
export function ensureDebianTool(binary: string, pkg: string): string {
  const found = onPath(binary);
  if (found) return found;
  const install = `${UPDATE} && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${pkg}`;
  sh(install, `\`${binary}\` (Debian package ${pkg}) is missing and installing it failed`);
  const path = onPath(binary);
  if (!path)
    throw new Error(`installed Debian package ${pkg}, but \`${binary}\` is still not on PATH (${process.env.PATH})`);
  return path;
}

/**
 * Debian's `pkg` unpacked (apt-get download + dpkg -x, never installed) under DEBIAN_CACHE/<pkg>: for packages
 * whose installation would start a service (prometheus does). Returns the root it is unpacked in; run its
 * binaries from there (`<root>/usr/bin/promtool`). Unpacked once; later calls find it.
 */
export function extractDebianPackage(pkg: string): string {
  const root = join(DEBIAN_CACHE, pkg);
  // the marker is written last: a root without it is an unpacking that was cut off
  if (existsSync(join(root, '.unpacked'))) return root;
  mkdirSync(DEBIAN_CACHE, { recursive: true });
  const work = mkdtempSync(join(DEBIAN_CACHE, `.${pkg}-`));
  try {
    const download = `cd '${work}' && apt-get download -q ${pkg}`;
    // a machine that never ran apt-get update has no package lists, so the first try can fail for that alone
    if (!sh(download, '', false)) sh(`${UPDATE} && ${download}`, `cannot download Debian package ${pkg}`);
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${pkg} left no .deb in ${work}`);
    sh(`dpkg -x '${join(work, deb)}' '${join(work, 'root')}'`, `cannot unpack ${deb}`);
    writeFileSync(join(work, 'root', '.unpacked'), `${deb}\n`);
    rmSync(root, { recursive: true, force: true });
    renameSync(join(work, 'root'), root);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return root;
}

/**
 * The shared libraries Debian's `pkg` depends on (its `Depends: lib...`), installed with apt-get where missing: for a
 * package unpacked by extractDebianPackage, whose programs need them (haproxy needs Lua, for one). Installing a
 * library starts no service. apt-get brings what they depend on in turn.
 */
export function ensureDebianLibraries(pkg: string): void {
  const depends = spawnSync('apt-cache', ['depends', pkg], { encoding: 'utf8' });
  if (depends.status !== 0) throw new Error(`apt-cache depends ${pkg} failed: ${depends.stderr}`);
  const libraries = [...depends.stdout.matchAll(/^\s*Depends: (lib[\w.+-]+)$/gm)].map((m) => m[1]!);
  const missing = libraries.filter((lib) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is dpkg-query's, not ours
    const status = spawnSync('dpkg-query', ['-W', '-f=${Status}', lib], { encoding: 'utf8' });
    return !status.stdout.includes('install ok installed');
  });
  if (missing.length === 0) return;
  const install = `DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`;
  if (!sh(install, '', false)) sh(`${UPDATE} && ${install}`, `cannot install ${missing.join(', ')} (needed by ${pkg})`);
}

/** Runs `command` with sh; false on failure when `must` is false, else throws `what` with the output's tail. */
function sh(command: string, what: string, must = true): boolean {
  const run = spawnSync('sh', ['-c', command], {
    encoding: 'utf8',
    timeout: INSTALL_TIMEOUT_MS - 10_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!run.error && run.status === 0) return true;
  if (!must) return false;
  const why = run.error ? run.error.message : `exit status ${run.status ?? `signal ${run.signal}`}`;
  const tail = (s: string | null | undefined) => (s ?? '').trim().split('\n').slice(-15).join('\n');
  throw new Error(
    `${what} (${why}).\nRan: ${command}\n(needs root and access to a Debian package mirror)\n${tail(run.stderr) || tail(run.stdout)}`,
  );
}
