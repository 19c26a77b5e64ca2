import type { Logger } from '../../base/index.ts';
import { type Fault, fault } from '../../base/index.ts';
import type { CrossrefHarvestSettings } from '../../config/index.ts';
import type { Store } from '../../store/index.ts';
import type { WindowFigures } from '../harvest/index.ts';
import { inImportProcess, openingOf } from './child-process.ts';

/**
 * The daemon's harvests run here: one CrossrefHarvest.run() in the import process (child-process.ts: this program
 * again, under `nice -n <settings.nice>` and SCHED_IDLE unless `settings.idle` is off), so that its paging, parsing and the window's commit (seconds for
 * 200,000 rows) never hold the thread that answers requests. Resolves with the run's figures or its Fault; an
 * aborted `signal` stops the run between pages.
 */
export function harvestInProcess(
  settings: CrossrefHarvestSettings,
  stores: readonly Store[],
  log: Logger,
  opts: { version: string; signal?: AbortSignal },
  command?: string[],
): Promise<WindowFigures | Fault> {
  const failed = (message: string): Fault => {
    const f = fault('HARVEST_PROCESS_FAILED', message);
    log.log('error', 'harvest.failed', { harvest: settings.name, code: f.code, message });
    return f;
  };
  const job = { kind: 'harvest' as const, settings, stores: openingOf(stores), version: opts.version };
  return inImportProcess(
    job,
    log,
    { nice: settings.nice, idle: settings.idle, signal: opts.signal, failed, name: 'harvest process' },
    command,
  );
}
