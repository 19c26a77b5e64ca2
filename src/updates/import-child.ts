import { fault, type Fault } from '../fault.ts';
import type { Logger } from '../log.ts';
import { Store } from '../store/index.ts';
import type { FromImportChild, ImportJob, ToImportChild } from './child-process.ts';
import { CrossrefHarvest } from './harvest/crossref-harvest.ts';
import { importSource } from './source.ts';

/**
 * The import process (child-process.ts starts it): says it is ready, takes its job, opens the stores, runs the job
 * once (a harvest, or one update source), closes them and sends the result, then waits for the daemon to close the
 * channel. A stop message, SIGTERM, SIGINT or the daemon going away stops a harvest between pages (its progress is
 * saved, so the next run carries on) and ends a source's import at once: nothing of it is applied unless its
 * commit was made, and a later import clears its scratch rows. Returns the exit code.
 */
export async function runImportChild(): Promise<number> {
  const send = (m: FromImportChild) => process.send?.(m);
  const log: Logger = { log: (level, event, fields) => send({ kind: 'log', level, event, ...(fields ? { fields } : {}) }) };
  const stopping = new AbortController();
  /** the job while it runs: a source's import has no place to stop but its end, so a stop ends the process */
  let running: ImportJob | undefined;
  const stop = () => {
    stopping.abort();
    if (running?.kind === 'source') process.exit(1); // LMDB keeps what was committed, nothing else
  };
  const closed = new Promise<void>((resolve) => process.once('disconnect', () => (stop(), resolve())));
  process.once('SIGTERM', stop).once('SIGINT', stop);
  process.on('SIGHUP', () => undefined); // a reload is the daemon's, not this job's
  const job = await new Promise<ImportJob | undefined>((resolve) => {
    process.on('message', (m: ToImportChild) => {
      if (m.kind !== 'job') return stop();
      if (!stopping.signal.aborted) running = m.job; // set here: a stop right after it in the same turn must see it
      resolve(m.job);
    });
    void closed.then(() => resolve(undefined));
    send({ kind: 'ready' });
  });
  if (!job || (job.kind === 'source' && stopping.signal.aborted)) return 1;
  const stores: Store[] = [];
  let result: unknown;
  try {
    for (const s of job.stores) stores.push(Store.open(s.dir, s.env, s));
    result =
      job.kind === 'harvest'
        ? await new CrossrefHarvest(job.settings, stores, log, { version: job.version }).run({ signal: stopping.signal })
        : await importSource(stores, job.source, { format: job.format, conditional: job.conditional });
  } catch (e) {
    const f: Fault = fault(job.kind === 'harvest' ? 'HARVEST_PROCESS_FAILED' : 'IMPORT_PROCESS_FAILED', `the ${job.kind === 'harvest' ? 'harvest' : 'import'} process failed: ${e instanceof Error ? e.message : String(e)}`);
    if (job.kind === 'harvest') log.log('error', 'harvest.failed', { harvest: job.settings.name, code: f.code, message: f.message });
    result = f;
  }
  running = undefined; // done: the channel closing after the result is the end, not a stop
  for (const s of stores) await s.close().catch(() => undefined);
  send({ kind: 'done', result });
  await closed;
  return 0;
}
