import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileCounts as StoreFileCounts } from '../../src/store/ledger/index.ts';
import { REPO } from './ingest-data.ts';

/**
 * The command-line program as an operator runs it (`bun src/main.ts --config CONFIG ...`), timed from spawn to
 * exit, with its stdout and stderr apart and its peak anonymous RSS (RssAnon, polled every 50 ms).
 */

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
  peakAnonKb: number;
}

const MAIN = join(REPO, 'src/main.ts');

export async function runCli(config: string, args: string[]): Promise<CliRun> {
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, MAIN, '--config', config, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    cwd: REPO,
  });
  let peakAnonKb = 0;
  const poll = setInterval(() => {
    try {
      const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
      if (m) peakAnonKb = Math.max(peakAnonKb, Number(m[1]));
    } catch {
      // gone
    }
  }, 50);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const ms = performance.now() - t0;
  clearInterval(poll);
  return { code, stdout, stderr, ms, peakAnonKb };
}

async function checked(config: string, args: string[], what: string): Promise<CliRun> {
  const r = await runCli(config, args);
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${(r.stderr + r.stdout).slice(-2000)}`);
  return r;
}

/** The counts of a file's ledger entry that the load checks and sums. */
export type FileCounts = Pick<StoreFileCounts, 'records' | 'added' | 'updated' | 'removed' | 'unchanged' | 'rejected'>;

export interface IngestRun extends CliRun {
  files: number;
  counts: FileCounts;
}

/**
 * `--ingest` of the given files (paths inside the config's bucket folder, so they are read in place); every file
 * must come back as `expect` says (`applied`, or `duplicate`: applied before). Returns the run and the files'
 * counts summed.
 */
export async function ingest(
  config: string,
  paths: readonly string[],
  expect: 'applied' | 'duplicate' = 'applied',
): Promise<IngestRun> {
  const r = await checked(config, ['--ingest', ...paths], '--ingest');
  const counts: FileCounts = { records: 0, added: 0, updated: 0, removed: 0, unchanged: 0, rejected: 0 };
  let files = 0;
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line) as { key: string; outcome: string; counts?: FileCounts };
    if (o.outcome !== expect) throw new Error(`--ingest: ${o.key} came back ${o.outcome}, not ${expect}: ${line}`);
    files++;
    for (const k of Object.keys(counts) as (keyof FileCounts)[]) counts[k] += o.counts?.[k] ?? 0;
  }
  if (files !== paths.length) throw new Error(`--ingest: ${paths.length} files given, ${files} outcomes printed`);
  return { ...r, files, counts };
}

export interface StoreStats {
  holdings: { total: number; byPlatform: Record<string, Record<string, number>> };
  store: { path: string; fileBytes: number; pageSize: number; usedPages: number; freePages: number };
}

/** `--stats` of the production store. */
export async function storeStats(config: string): Promise<StoreStats & { ms: number }> {
  const r = await checked(config, ['--stats', '--env', 'production'], '--stats');
  return { ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as StoreStats), ms: r.ms };
}

export interface FileReport {
  key: string;
  outcome: string;
  counts?: FileCounts;
  timings?: { readMs: number; parseMs: number; applyMs: number };
}

/** `--report` of ledger keys: each file's outcome, counts and timings. */
export async function reports(config: string, keys: readonly string[]): Promise<FileReport[]> {
  const r = await checked(config, ['--report', ...keys], '--report');
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as FileReport);
}
