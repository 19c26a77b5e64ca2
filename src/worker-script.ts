/**
 * Where a worker's script is, by its path under src/: inside the compiled binary, where scripts/build.ts makes
 * it an entrypoint under /$bunfs/root/, or beside this file when run from the sources.
 */
export function workerScript(pathInSrc: string): string {
  if (import.meta.url.includes('/$bunfs/')) return `/$bunfs/root/${pathInSrc}`;
  return new URL(`./${pathInSrc}`, import.meta.url).href;
}

/** The command that runs this program again: the compiled executable itself, or bun with src/main.ts. */
export function selfCommand(): string[] {
  if (import.meta.url.includes('/$bunfs/')) return [process.execPath];
  return [process.execPath, new URL('./main.ts', import.meta.url).pathname];
}
