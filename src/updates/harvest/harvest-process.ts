import type { CrossrefHarvestSettings, EnvName } from '../../config/index.ts';
import { fault, type Fault } from '../../fault.ts';
import type { Level, Logger } from '../../log.ts';
import type { Store } from '../../store/index.ts';
import { selfCommand } from '../../worker-script.ts';
import type { WindowFigures } from './harvest-state.ts';

/** The first argument that makes this program a harvest process (harvest-child.ts) instead of a command. */
export const HARVEST_CHILD_ARG = '--harvest-child';

/** What the harvest process is sent: the harvest, and where its stores are (it opens them too, as the CLI does). */
export interface HarvestJob {
  settings: CrossrefHarvestSettings;
  stores: { dir: string; env: EnvName; mapSizeBytes: number; changeFeedKeepMs: number }[];
  version: string;
}

/** Parent to child: the job once the child is listening, or a stop (the run ends between pages, its progress saved). */
export type ToHarvestChild = { kind: 'job'; job: HarvestJob } | { kind: 'stop' };
/** Child to parent: ready for the job, its log lines (logged by the parent's logger), then the run's result. */
export type FromHarvestChild =
  | { kind: 'ready' }
  | { kind: 'log'; level: Level; event: string; fields?: Record<string, unknown> }
  | { kind: 'done'; result: WindowFigures | Fault };

/**
 * The daemon's harvests run here: one CrossrefHarvest.run() in a process of its own (this program again, under
 * `nice -n <settings.nice>`), so that its paging, parsing and the window's commit (seconds for 200,000 rows) never
 * hold the thread that answers requests, and under load the requests get the CPU first. A process, not a worker
 * thread: a thread's lower priority would pass to the threads it starts, and Bun's HTTP client thread and
 * lmdb-js's write thread are shared by the whole process. Resolves with the run's figures or its Fault; an
 * aborted `signal` stops the run between pages.
 */
export function harvestInProcess(
  settings: CrossrefHarvestSettings,
  stores: readonly Store[],
  log: Logger,
  opts: { version: string; signal?: AbortSignal },
  command = selfCommand(),
): Promise<WindowFigures | Fault> {
  const job: HarvestJob = { settings, stores: stores.map((s) => ({ env: s.env, ...s.opened })), version: opts.version };
  const failed = (message: string): Fault => {
    const f = fault('HARVEST_PROCESS_FAILED', message);
    log.log('error', 'harvest.failed', { harvest: settings.name, code: f.code, message });
    return f;
  };
  let child: ReturnType<typeof Bun.spawn>;
  let result: WindowFigures | Fault | undefined;
  let open = true; // the channel, until the result came or the child exited
  const send = (m: ToHarvestChild) => {
    if (open) child.send(m);
  };
  try {
    child = Bun.spawn([...(settings.nice > 0 ? ['nice', '-n', String(settings.nice)] : []), ...command, HARVEST_CHILD_ARG], {
      stdio: ['ignore', 'inherit', 'inherit'],
      ipc(m: FromHarvestChild) {
        if (m.kind === 'ready') send({ kind: 'job', job });
        else if (m.kind === 'log') log.log(m.level, m.event, m.fields);
        else {
          result = m.result;
          open = false;
          child.disconnect(); // the child exits once it sees the channel close
        }
      },
    });
  } catch (e) {
    return Promise.resolve(failed(`the harvest process could not start (${[...command, HARVEST_CHILD_ARG].join(' ')}): ${e instanceof Error ? e.message : String(e)}`));
  }
  const stop = () => send({ kind: 'stop' });
  opts.signal?.addEventListener('abort', stop, { once: true });
  if (opts.signal?.aborted) stop();
  return child.exited.then((code) => {
    open = false;
    opts.signal?.removeEventListener('abort', stop);
    return result ?? failed(`the harvest process ended (exit ${code}${child.signalCode ? `, ${child.signalCode}` : ''}) before it finished its run`);
  });
}
