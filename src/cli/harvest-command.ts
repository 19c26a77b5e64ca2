import type { Logger } from '../base/index.ts';
import type { Config } from '../config/index.ts';
import type { Store } from '../store/index.ts';
import { CrossrefHarvest, skippedFaults } from '../updates/index.ts';
import { EXIT_INPUT_FAULTS, EXIT_OK, EXIT_USAGE, type Output } from './output.ts';
import { Progress } from './progress.ts';

/**
 * --harvest [--full] [--allow-shrink]: runs every configured Crossref harvest once, now (a first load, or from cron),
 * into every configured environment. A progress line goes to a terminal's stderr; one JSON report per harvest
 * to stdout. Exit 1 when a harvest failed or skipped faulty rows (it resumes from where it stopped next time).
 */
export async function harvestCommand(
  config: Config,
  stores: Store[],
  io: Output,
  isTty: boolean,
  log: Logger,
  opts: { full?: boolean; allowShrink?: boolean; version: string },
): Promise<number> {
  if (config.updates.crossref.length === 0) {
    io.err(`doi-holdings: no [[updates.crossref]] harvest is configured in ${config.source}`);
    return EXIT_USAGE;
  }
  // the CLI does not demand the daemon's secrets (S3 keys), but a harvest told to use a Plus token must have it
  const tokenless = config.updates.crossref.filter((s) => s.plusTokenEnv !== undefined && s.plusToken === undefined);
  if (tokenless.length > 0) {
    for (const s of tokenless)
      io.err(
        `doi-holdings: harvest ${s.name}: environment variable ${s.plusTokenEnv} (plusTokenEnv) is not set or empty`,
      );
    return EXIT_USAGE;
  }
  let code = EXIT_OK;
  for (const settings of config.updates.crossref) {
    const harvest = new CrossrefHarvest(settings, stores, log, { version: opts.version });
    const progress = new Progress(isTty);
    const result = await harvest.run({
      full: opts.full,
      allowShrink: opts.allowShrink,
      onProgress: (p) =>
        progress.update(
          (s) =>
            `harvesting ${settings.name}: ${p.pass} ${p.received.toLocaleString('en')} of ${p.total.toLocaleString('en')} works, ` +
            `${p.pages.toLocaleString('en')} pages, ${s} s`,
        ),
    });
    progress.done();
    if ('code' in result) {
      io.err(`doi-holdings: harvest ${settings.name}: ${result.code}: ${result.message}`);
      code = EXIT_INPUT_FAULTS;
      continue;
    }
    io.out(JSON.stringify({ harvest: settings.name, ...result }));
    if (skippedFaults(result)) code = EXIT_INPUT_FAULTS;
  }
  return code;
}
