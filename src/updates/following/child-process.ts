import type { Logger, LowPriorityChild, Priority } from '../../base/index.ts';
import { type Fault, fault, selfCommand, startLowPriority } from '../../base/index.ts';
import type { CrossrefHarvestSettings, EnvName } from '../../config/index.ts';
import type { Store } from '../../store/index.ts';
import type { UpdateFormat } from '../../update-record/index.ts';
import type { WindowFigures } from '../harvest/index.ts';
import type { ConditionalState, SourceResult } from '../import/index.ts';

/** The first argument that makes this program an import process (import-child.ts) instead of a command. */
export const IMPORT_CHILD_ARG = '--import-child';

/** Where the import process opens the stores (it opens them too, as the CLI does). */
type StoreOpening = { dir: string; env: EnvName; mapSizeBytes: number; changeFeedKeepMs: number };

/** What the import process is sent: a Crossref harvest run, or one update source read and applied. */
export type ImportJob =
  | { kind: 'harvest'; settings: CrossrefHarvestSettings; stores: StoreOpening[]; version: string }
  | { kind: 'source'; source: string; format?: UpdateFormat; conditional?: ConditionalState; stores: StoreOpening[] };

export type SourceOutcome = SourceResult | { notModified: true } | Fault;
/** What each kind of job ends in. */
type JobResult<J extends ImportJob> = J extends { kind: 'harvest' } ? WindowFigures | Fault : SourceOutcome;

/** Parent to child: the job once the child is listening, or a stop. */
export type ToImportChild = { kind: 'job'; job: ImportJob } | { kind: 'stop' };
/** Child to parent: ready for the job, then the job's result (its log lines go beside: childSide). */
export type FromImportChild = { kind: 'ready' } | { kind: 'done'; result: unknown };

export function openingOf(stores: readonly Store[]): StoreOpening[] {
  return stores.map((s) => ({ env: s.env, ...s.opened }));
}

/**
 * Runs one import job in a process of its own: this program again, at a lower priority (startLowPriority), so that
 * reading a source and its commit (a transaction of seconds for a Retraction Watch snapshot or a harvest window)
 * never hold the thread that answers requests. Resolves with the job's result, or with the Fault that `failed`
 * makes of why the process gave none; an aborted `signal` sends the child a stop.
 */
export function inImportProcess<J extends ImportJob>(
  job: J,
  log: Logger,
  opts: Priority & { signal?: AbortSignal; failed: (message: string) => Fault; name: string },
  command?: string[],
): Promise<JobResult<J>> {
  let child: LowPriorityChild<ToImportChild>;
  let result: JobResult<J> | undefined;
  try {
    child = startLowPriority<ToImportChild, FromImportChild>({
      arg: IMPORT_CHILD_ARG,
      priority: opts,
      name: opts.name,
      log,
      command,
      onMessage(m) {
        if (m.kind === 'ready' && !opts.signal?.aborted) child.send({ kind: 'job', job });
        else if (m.kind === 'ready')
          child.disconnect(); // stopped before it began: the child ends without a job
        else if (m.kind === 'done') {
          result = m.result as JobResult<J>;
          child.disconnect(); // the child exits once it sees the channel close
        }
      },
    });
  } catch (e) {
    return Promise.resolve(
      opts.failed(
        `the ${opts.name} could not start (${[...(command ?? selfCommand()), IMPORT_CHILD_ARG].join(' ')}): ${e instanceof Error ? e.message : String(e)}`,
      ) as JobResult<J>,
    );
  }
  const stop = () => child.send({ kind: 'stop' });
  opts.signal?.addEventListener('abort', stop, { once: true });
  if (opts.signal?.aborted) stop();
  return child.exited.then(({ code, signal }) => {
    opts.signal?.removeEventListener('abort', stop);
    return (
      result ??
      (opts.failed(
        `the ${opts.name} (${child.argv.join(' ')}) ended (exit ${code}${signal ? `, ${signal}` : ''}) before it finished its job`,
      ) as JobResult<J>)
    );
  });
}

/** One update source (a dropped file, a URL) read and applied in the import process (importSource there). */
export function importInProcess(
  stores: readonly Store[],
  source: string,
  opts: { format?: UpdateFormat; conditional?: ConditionalState; nice: number; signal?: AbortSignal },
  log: Logger,
  command?: string[],
): Promise<SourceOutcome> {
  const job: ImportJob = {
    kind: 'source',
    source,
    format: opts.format,
    conditional: opts.conditional,
    stores: openingOf(stores),
  };
  const failed = (message: string) => fault('IMPORT_PROCESS_FAILED', `${source}: ${message}`);
  return inImportProcess(job, log, { nice: opts.nice, signal: opts.signal, failed, name: 'import process' }, command);
}
