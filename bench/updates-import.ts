/**
 * Retraction Watch import at full size (issue 12): a 65,000-row CSV synthesised from the 3,000-row sample by
 * varying the DOIs (copy n gets `.n<n>` appended to every real DOI and a new Record ID), imported into a fresh
 * store through the real CLI, `--import-updates FILE`. Prints rows, seconds and the process's peak RSS.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/support/fixtures.ts';
import { writeRetractionWatchCsv } from './lib/rw-csv.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt, mib } from './lib/measure.ts';

const ROWS = 65_000;

const work = tempDir('doi-holdings-bench-rw-');
try {
  const csv = join(work.path, 'retraction-watch-65k.csv');
  const bytes = await writeRetractionWatchCsv(csv, ROWS);
  const config = join(work.path, 'rw.toml');
  writeFileSync(config, `[store]\ndir = "db"\nmapSizeGiB = 1\n[buckets.production]\nkind = "local"\npath = "bucket"\n[[platforms]]\nname = "example"\n`);

  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, join(REPO, 'src/main.ts'), '--import-updates', csv, '--config', config], { stdout: 'pipe', stderr: 'pipe', cwd: REPO });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const seconds = (performance.now() - t0) / 1000;
  const usage = proc.resourceUsage();
  if (code > 1) throw new Error(`--import-updates failed (${code}): ${stderr}`);
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as { rows: number; used: number; works: number; skipped: Record<string, number>; seconds: number };
  console.log(`\nRetraction Watch import, ${fmt(report.rows)} rows (${fmt(bytes / 1e6, 1)} MB synthesised from the sample), fresh store:`);
  console.log(`  --import-updates wall time ${fmt(seconds, 2)} s including process start (import itself ${fmt(report.seconds, 2)} s); target <= 5 s`);
  console.log(`  ${fmt(report.used)} rows used, ${fmt(report.works)} works with updates, skipped ${JSON.stringify(report.skipped)}; exit ${code}`);
  console.log(`  peak RSS of the import process: ${usage ? mib(usage.maxRSS) : 'n/a'}`);
} finally {
  work.remove();
}
