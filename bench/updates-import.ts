/**
 * Retraction Watch import at full size (issue 12): a 65,000-row CSV synthesised from the 3,000-row sample by
 * varying the DOIs (copy n gets `.n<n>` appended to every real DOI and a new Record ID), imported into a fresh
 * store through the real CLI, `--import-updates FILE`. Prints rows, seconds and the process's peak RSS. Then the
 * same CSV dropped into a running daemon's `updates.dropDir` (another fresh store): the time from the drop to its
 * `updates.imported` line, and the longest `/healthz` answer meanwhile (polled one after another, 20 ms apart):
 * the daemon imports in a process of its own, so that the snapshot's commit never holds its requests.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/support/fixtures.ts';
import { writeDaemonConfig } from './lib/daemon-config.ts';
import { REPO } from './lib/ingest-data.ts';
import { fmt, mib } from './lib/measure.ts';
import { pauseProbe } from './lib/process-probes.ts';
import { startProcess, stopAll } from './lib/processes.ts';
import { writeRetractionWatchCsv } from './lib/rw-csv.ts';

const ROWS = 65_000;

const work = tempDir('doi-holdings-bench-rw-');
try {
  const csv = join(work.path, 'retraction-watch-65k.csv');
  const bytes = await writeRetractionWatchCsv(csv, ROWS);
  const config = join(work.path, 'rw.toml');
  writeFileSync(
    config,
    `[store]\ndir = "db"\nmapSizeGiB = 1\n[buckets.production]\nkind = "local"\npath = "bucket"\n[[platforms]]\nname = "example"\n`,
  );

  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, join(REPO, 'src/main.ts'), '--import-updates', csv, '--config', config], {
    stdout: 'pipe',
    stderr: 'pipe',
    cwd: REPO,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const seconds = (performance.now() - t0) / 1000;
  const usage = proc.resourceUsage();
  if (code > 1) throw new Error(`--import-updates failed (${code}): ${stderr}`);
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as {
    rows: number;
    used: number;
    works: number;
    skipped: Record<string, number>;
    ms: number;
  };
  console.log(
    `\nRetraction Watch import, ${fmt(report.rows)} rows (${fmt(bytes / 1e6, 1)} MB synthesised from the sample), fresh store:`,
  );
  console.log(
    `  --import-updates wall time ${fmt(seconds, 2)} s including process start (import itself ${fmt(report.ms / 1000, 2)} s); target <= 5 s`,
  );
  console.log(
    `  ${fmt(report.used)} rows used, ${fmt(report.works)} works with updates, skipped ${JSON.stringify(report.skipped)}; exit ${code}`,
  );
  console.log(`  peak RSS of the import process: ${usage ? mib(usage.maxRSS) : 'n/a'}`);

  // the same file dropped into the daemon's folder (a new name: written aside, then renamed in, as a download is)
  const daemonDir = join(work.path, 'daemon');
  const dropDir = join(daemonDir, 'drop');
  mkdirSync(join(daemonDir, 'bucket'), { recursive: true });
  mkdirSync(dropDir);
  const daemonConfig = join(daemonDir, 'daemon.toml');
  writeDaemonConfig(daemonConfig, {
    mapSizeGiB: 1,
    bucket: join(daemonDir, 'bucket'),
    platforms: [{ name: 'example' }],
    apiKey: 'bench-key-0123456789',
    updates: true,
    extra: `[updates]\ndropDir = "${dropDir}"\n`,
  });
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', daemonConfig],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
  );
  await Bun.sleep(1000);
  const idle = await probeFor(pauseProbe(daemon.url), 1000);
  const during = pauseProbe(daemon.url);
  const t1 = performance.now();
  writeFileSync(join(dropDir, '.rw.csv'), await Bun.file(csv).bytes());
  renameSync(join(dropDir, '.rw.csv'), join(dropDir, 'rw.csv'));
  const imported = /^.*"event":"updates\.imported".*$/m;
  while (!imported.exec(daemon.output())) {
    if (performance.now() - t1 > 120_000)
      throw new Error(`the daemon did not import the dropped file in 2 minutes: ${daemon.output().slice(-2000)}`);
    await Bun.sleep(20);
  }
  const dropSeconds = (performance.now() - t1) / 1000;
  const longest = await during.stop();
  const line = JSON.parse(imported.exec(daemon.output())![0]) as { rows: number; ms: number };
  await daemon.stop();
  console.log(
    `\nthe same CSV dropped into a running daemon's updates.dropDir (a fresh store), imported in its import process at nice 10:`,
  );
  console.log(
    `  imported ${fmt(dropSeconds, 2)} s after the drop (the import itself ${fmt(line.ms / 1000, 2)} s, ${fmt(line.rows)} rows)`,
  );
  console.log(
    `  longest /healthz answer during it: ${fmt(longest, 1)} ms (for 1 s before it, idle: ${fmt(idle, 1)} ms)`,
  );
} finally {
  await stopAll();
  work.remove();
}

async function probeFor(p: ReturnType<typeof pauseProbe>, ms: number): Promise<number> {
  await Bun.sleep(ms);
  return p.stop();
}
