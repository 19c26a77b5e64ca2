import { fault, type Fault } from '../../fault.ts';
import type { Logger } from '../../log.ts';
import { Store } from '../../store/index.ts';
import { CrossrefHarvest } from './crossref-harvest.ts';
import type { WindowFigures } from './harvest-state.ts';
import type { FromHarvestChild, HarvestJob, ToHarvestChild } from './harvest-process.ts';

/**
 * The harvest process (harvest-process.ts starts it): says it is ready, takes its job, opens the stores, runs the
 * harvest once, closes them and sends the result, then waits for the daemon to close the channel. A stop message,
 * SIGTERM, SIGINT or the daemon going away stops the run between pages; its progress is saved, so the next run
 * carries on. Returns the exit code.
 */
export async function runHarvestChild(): Promise<number> {
  const send = (m: FromHarvestChild) => process.send?.(m);
  const log: Logger = { log: (level, event, fields) => send({ kind: 'log', level, event, ...(fields ? { fields } : {}) }) };
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  const closed = new Promise<void>((resolve) => process.once('disconnect', () => (stop(), resolve())));
  process.once('SIGTERM', stop).once('SIGINT', stop);
  process.on('SIGHUP', () => undefined); // a reload is the daemon's, not this run's
  const job = await new Promise<HarvestJob | undefined>((resolve) => {
    process.on('message', (m: ToHarvestChild) => (m.kind === 'job' ? resolve(m.job) : stop()));
    void closed.then(() => resolve(undefined));
    send({ kind: 'ready' });
  });
  if (!job) return 1;
  const stores: Store[] = [];
  let result: WindowFigures | Fault;
  try {
    for (const s of job.stores) stores.push(Store.open(s.dir, s.env, s));
    result = await new CrossrefHarvest(job.settings, stores, log, { version: job.version }).run({ signal: stopping.signal });
  } catch (e) {
    result = fault('HARVEST_PROCESS_FAILED', `the harvest process failed: ${e instanceof Error ? e.message : String(e)}`);
    log.log('error', 'harvest.failed', { harvest: job.settings.name, code: result.code, message: result.message });
  }
  for (const s of stores) await s.close().catch(() => undefined);
  send({ kind: 'done', result });
  await closed;
  return 0;
}
