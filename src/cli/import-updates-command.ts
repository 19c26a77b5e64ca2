import type { Store } from '../store/index.ts';
import { importFigures, importSource, skippedFaults, type UpdateFormat } from '../updates/index.ts';
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
  // the daemon's updates.imported line, by the same names
  io.out(JSON.stringify(importFigures(result, performance.now() - started)));
  return skippedFaults(result.parsed.report) ? EXIT_INPUT_FAULTS : EXIT_OK;
}
