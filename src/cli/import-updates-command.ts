import type { Store } from '../store/index.ts';
import { importSource, skippedFaults, type UpdateFormat } from '../updates/index.ts';
import { EXIT_INPUT_FAULTS, EXIT_OK, type Output } from './output.ts';
import { Progress } from './progress.ts';

/**
 * --import-updates PATH|URL: imports into every configured environment (staging answers carry the same update
 * information as production). A progress line goes to a terminal's stderr; the report to stdout.
 */
export async function importUpdatesCommand(
  source: string,
  format: UpdateFormat | undefined,
  stores: Store[],
  io: Output,
  isTty: boolean,
  opts: { allowShrink?: boolean } = {},
): Promise<number> {
  const started = performance.now();
  const progress = new Progress(isTty);
  const onProgress = (rows: number, bytes: number) =>
    progress.update(
      (s) => `importing ${source}: ${rows.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB, ${s} s`,
    );
  const result = await importSource(stores, source, { format, onProgress, allowShrink: opts.allowShrink });
  progress.done();
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
  return skippedFaults(report) ? EXIT_INPUT_FAULTS : EXIT_OK;
}
