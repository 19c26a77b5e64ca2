import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Written into the compiled binary by scripts/build.ts (Bun.build `define`); not defined in the sources. */
declare const DOI_HOLDINGS_COMMIT: string | undefined;

/** The commit when it cannot be told (no git, no .git, git failing). */
export const UNKNOWN_COMMIT = 'unknown';

/** The repository's root, seen from this file (src/base/) when run from the sources. */
const SOURCES_ROOT = join(import.meta.dir, '..', '..');

/**
 * The git commit this program was built from (doi_holdings_build_info): the one scripts/build.ts wrote into the
 * compiled binary, else, run from the sources, what git says of their checkout. Asked once, when the daemon starts, and by --version.
 */
export function buildCommit(): string {
  if (typeof DOI_HOLDINGS_COMMIT === 'string') return DOI_HOLDINGS_COMMIT;
  return gitCommit(SOURCES_ROOT);
}

/**
 * `git rev-parse --short HEAD` in `repo`, or UNKNOWN_COMMIT: git missing, `repo` not a checkout of its own (its
 * `.git` is looked for, so a copy of the sources inside another repository does not take that one's commit), or
 * anything else going wrong. Never throws: a commit is not worth failing a start for.
 */
export function gitCommit(repo: string): string {
  if (!existsSync(join(repo, '.git'))) return UNKNOWN_COMMIT;
  try {
    const git = spawnSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    });
    const commit = git.status === 0 ? git.stdout.trim() : '';
    return /^[0-9a-f]{4,64}$/.test(commit) ? commit : UNKNOWN_COMMIT;
  } catch {
    return UNKNOWN_COMMIT;
  }
}
