/**
 * Retraction Watch import at full size (issue 12): a 65,000-row CSV synthesised from the 3,000-row sample by
 * varying the DOIs (copy n gets `.n<n>` appended to every real DOI and a new Record ID), imported into a fresh
 * store through the real CLI, `--import-updates FILE`. Prints rows, seconds and the process's peak RSS.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecords } from '../src/updates/index.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { SAMPLE_PATH as SAMPLE } from '../test/support/rw-sample.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt, mib } from './lib/measure.ts';

const ROWS = 65_000;

const work = tempDir('doi-holdings-bench-rw-');
try {
  const rows: string[][] = [];
  for await (const { fields } of csvRecords(createReadStream(SAMPLE))) rows.push(fields);
  const [header, ...sample] = rows as [string[], ...string[][]];
  const at = (name: string) => header.indexOf(name);
  const doiCols = [at('OriginalPaperDOI'), at('RetractionDOI')];
  const idCol = at('Record ID');
  const quote = (f: string) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);
  const out: string[] = [header.map(quote).join(',')];
  for (let i = 0; out.length <= ROWS; i++) {
    const copy = Math.floor(i / sample.length);
    const row = [...sample[i % sample.length]!];
    if (copy > 0) {
      row[idCol] = String(Number(row[idCol]) + copy * 1_000_000);
      for (const c of doiCols) if (row[c]!.startsWith('10.')) row[c] = `${row[c]}.n${copy}`;
    }
    out.push(row.map(quote).join(','));
  }
  const csv = join(work.path, 'retraction-watch-65k.csv');
  writeFileSync(csv, `${out.join('\r\n')}\r\n`);
  const bytes = Bun.file(csv).size;
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
