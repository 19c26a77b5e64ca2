import type { Level, Logger } from '../../base/index.ts';
import { type Fault, fault, selfCommand } from '../../base/index.ts';
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
/** Child to parent: ready for the job, its log lines (logged by the parent's logger), then the job's result. */
export type FromImportChild =
  | { kind: 'ready' }
  | { kind: 'log'; level: Level; event: string; fields?: Record<string, unknown> }
  | { kind: 'done'; result: unknown };

export function openingOf(stores: readonly Store[]): StoreOpening[] {
  return stores.map((s) => ({ env: s.env, ...s.opened }));
}

/** How much CPU an import process yields: its nice value, and whether it runs under Linux's SCHED_IDLE policy. */
type Priority = { nice: number; idle?: boolean };

/**
 * The commands an import process is started under for its priority: `chrt --idle 0` (util-linux) when `idle`, then
 * `nice -n <nice>`. A SCHED_IDLE task gets the smallest share of the CPU, and the kernel preempts it at once for a
 * waking one: during a harvest the Updates API kept 0.73-0.94 of its rate at nice 19, 0.82-0.93 with SCHED_IDLE
 * too (bench/harvest.ts). Every thread the child starts inherits both. Where chrt cannot start a program under
 * SCHED_IDLE (missing, or the policy refused) the child runs at its nice value only, and `idleUnavailable` says so.
 */
export function priorityArgv(
  p: Priority,
  canIdle: () => boolean = idleSchedulingWorks,
): { argv: string[]; idleUnavailable?: true } {
  const idle = p.idle === true && canIdle();
  const argv = [...(idle ? ['chrt', '--idle', '0'] : []), ...(p.nice > 0 ? ['nice', '-n', String(p.nice)] : [])];
  return p.idle === true && !idle ? { argv, idleUnavailable: true } : { argv };
}

let idleProbe: boolean | undefined;
/** Whether `chrt --idle 0` starts a program here: tried once a process, so a chrt that fails cannot fail every import. */
export function idleSchedulingWorks(): boolean {
  if (idleProbe === undefined) {
    try {
      idleProbe =
        Bun.which('chrt') !== null &&
        Bun.spawnSync(['chrt', '--idle', '0', 'true'], { stdio: ['ignore', 'ignore', 'ignore'] }).exitCode === 0;
    } catch {
      idleProbe = false;
    }
  }
  return idleProbe;
}

/** said once a process: the fallback does not change between imports */
let idleWarned = false;

/**
 * Runs one import job in a process of its own: this program again, at a lower priority (priorityArgv), so that
 * reading a source and its commit (a transaction of seconds for a Retraction Watch snapshot or a harvest window)
 * never hold the thread that answers requests, and under load the requests get the CPU first. A process, not a
 * worker thread: a thread's lower priority would pass to the threads it starts, and Bun's HTTP client thread and
 * lmdb-js's write thread are shared by the whole process. Resolves with the job's result, or with the Fault that
 * `failed` makes of why the process gave none; an aborted `signal` sends the child a stop.
 */
export function inImportProcess<J extends ImportJob>(
  job: J,
  log: Logger,
  opts: Priority & { signal?: AbortSignal; failed: (message: string) => Fault; name: string },
  command = selfCommand(),
): Promise<JobResult<J>> {
  let child: ReturnType<typeof Bun.spawn>;
  let result: JobResult<J> | undefined;
  let open = true; // the channel, until the result came or the child exited
  const send = (m: ToImportChild) => {
    if (open) child.send(m);
  };
  const priority = priorityArgv(opts);
  if (priority.idleUnavailable && !idleWarned) {
    idleWarned = true;
    log.log('warn', 'import.idle_unavailable', {
      process: opts.name,
      message: `chrt --idle 0 (util-linux) cannot start a program here (not on the PATH, or the policy refused): the ${opts.name} runs at nice ${opts.nice} only, not under SCHED_IDLE`,
    });
  }
  const argv = [...priority.argv, ...command, IMPORT_CHILD_ARG];
  try {
    child = Bun.spawn(argv, {
      stdio: ['ignore', 'inherit', 'inherit'],
      ipc(m: FromImportChild) {
        if (m.kind === 'ready' && !opts.signal?.aborted) send({ kind: 'job', job });
        else if (m.kind === 'ready') {
          open = false; // stopped before it began: the child ends without a job
          child.disconnect();
        } else if (m.kind === 'log') log.log(m.level, m.event, m.fields);
        else {
          result = m.result as JobResult<J>;
          open = false;
          child.disconnect(); // the child exits once it sees the channel close
        }
      },
    });
  } catch (e) {
    return Promise.resolve(
      opts.failed(
        `the ${opts.name} could not start (${argv.join(' ')}): ${e instanceof Error ? e.message : String(e)}`,
      ) as JobResult<J>,
    );
  }
  const stop = () => send({ kind: 'stop' });
  opts.signal?.addEventListener('abort', stop, { once: true });
  if (opts.signal?.aborted) stop();
  return child.exited.then((code) => {
    open = false;
    opts.signal?.removeEventListener('abort', stop);
    return (
      result ??
      (opts.failed(
        `the ${opts.name} (${argv.join(' ')}) ended (exit ${code}${child.signalCode ? `, ${child.signalCode}` : ''}) before it finished its job`,
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
