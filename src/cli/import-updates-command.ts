import { importSource, type UpdateFormat } from '../updates/index.ts';
import type { Store } from '../store/index.ts';
import { EXIT_INPUT_FAULTS, EXIT_OK, type Output } from './output.ts';

/**
 * --import-updates PATH|URL: imports into every configured environment (staging answers carry the same update
 * information as production). A progress line goes to stderr for large files; the report to stdout.
 */
export async function importUpdatesCommand(
  source: string,
  format: UpdateFormat | undefined,
  stores: Store[],
  io: Output,
  isTty: boolean,
  opts: { allowShrink?: boolean } = {},
): Promise<number> {
  let lastShown = 0;
  const started = performance.now();
  const onProgress = (rows: number, bytes: number) => {
    const now = performance.now();
    if (now - lastShown < (isTty ? 200 : 2000)) return;
    lastShown = now;
    const line = `importing ${source}: ${rows.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB, ${((now - started) / 1000).toFixed(1)} s`;
    if (isTty) process.stderr.write(`\r${line}`);
    else io.err(line);
  };
  const result = await importSource(stores, source, { format, onProgress, allowShrink: opts.allowShrink });
  if (isTty && lastShown > 0) process.stderr.write('\n');
  if ('notModified' in result) return EXIT_OK;
  if ('code' in result) {
    io.err(`doi-holdings: ${result.code}: ${result.message}`);
    return EXIT_INPUT_FAULTS;
  }
  const { report } = result.parsed;
  io.out(
    JSON.stringify({
      source,
      format: result.format,
      rows: report.rows,
      used: report.used,
      works: result.parsed.works,
      skipped: report.skipped,
      examples: report.examples,
      applied: result.applied,
      seconds: Math.round(performance.now() - started) / 1000,
    }),
  );
  return Object.keys(report.skipped).length > 0 ? EXIT_INPUT_FAULTS : EXIT_OK;
}
