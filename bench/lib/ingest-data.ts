import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** The generated deposits shared by the ingest and S3 benchmarks, written once under .bench/. */
export const GENERATOR_VERSION = 2;
export const REPO = join(import.meta.dir, '..', '..');
export const BENCH_DIR = join(REPO, '.bench');

/** What bench/ingest-generate.ts wrote: its version, and the deposit files of each part in apply order. */
export interface Manifest {
  version: number;
  recordsPerFile: number;
  a: string[];
  b: string[];
  c: string[];
}

export async function ingestData(): Promise<{ dir: string; manifest: Manifest }> {
  const dir = join(BENCH_DIR, `ingest-data-v${GENERATOR_VERSION}`);
  if (!existsSync(join(dir, 'manifest.json'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.log(`generating deposits into ${dir} ...`);
    await runBench('ingest-generate.ts', dir);
  }
  return { dir, manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest };
}

/** Runs another bench script as its own process; returns its last stdout line. */
export async function runBench(script: string, ...args: string[]): Promise<string> {
  const proc = Bun.spawn([process.execPath, join(REPO, 'bench', script), ...args], {
    stdout: 'pipe',
    stderr: 'inherit',
    cwd: REPO,
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`${script} exited with ${code}`);
  return out.trim().split('\n').pop()!;
}
