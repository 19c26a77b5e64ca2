import { childSide, type Fault, fault } from '../../base/index.ts';
import { Store } from '../../store/index.ts';
import { CrossrefHarvest } from '../harvest/index.ts';
import { importSource } from '../import/index.ts';
import type { FromImportChild, ImportJob, ToImportChild } from './child-process.ts';

/**
 * The import process (child-process.ts starts it): says it is ready, takes its job, opens the stores, runs the job
 * once (a harvest, or one update source), closes them and sends the result, then waits for the daemon to close the
 * channel. A stop message, SIGTERM, SIGINT or the daemon going away stops a harvest between pages (its progress is
 * saved, so the next run carries on) and a source's import before its commit (IMPORT_STOPPED: nothing of it is
 * applied, its scratch rows removed; a stop during the commit lets the commit finish). Returns the exit code.
 */
export async function runImportChild(): Promise<number> {
  const { send, log, stopping, stop, closed } = childSide<FromImportChild>();
  const job = await new Promise<ImportJob | undefined>((resolve) => {
    process.on('message', (m: ToImportChild) => (m.kind === 'job' ? resolve(m.job) : stop()));
    void closed.then(() => resolve(undefined));
    send({ kind: 'ready' });
  });
  if (!job) return 1;
  const stores: Store[] = [];
  let result: unknown;
  try {
    for (const s of job.stores) stores.push(Store.open(s.dir, s.env, s));
    result =
      job.kind === 'harvest'
        ? await new CrossrefHarvest(job.settings, stores, log, { version: job.version }).run({
            signal: stopping,
          })
        : await importSource(stores, job.source, {
            format: job.format,
            conditional: job.conditional,
            signal: stopping,
          });
  } catch (e) {
    const f: Fault = fault(
      job.kind === 'harvest' ? 'HARVEST_PROCESS_FAILED' : 'IMPORT_PROCESS_FAILED',
      `the ${job.kind === 'harvest' ? 'harvest' : 'import'} process failed: ${e instanceof Error ? e.message : String(e)}`,
    );
    if (job.kind === 'harvest')
      log.log('error', 'harvest.failed', { harvest: job.settings.name, code: f.code, message: f.message });
    result = f;
  }
  for (const s of stores) await s.close().catch(() => undefined);
  send({ kind: 'done', result });
  await closed;
  return 0;
}
