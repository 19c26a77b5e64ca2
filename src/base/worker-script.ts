import { settlesWithin } from './settles-within.ts';

/** Other threads and processes of this program: where a worker's script is, one job on a worker, this program again. */

/** Inside the compiled binary (bun build --compile), where the sources sit under /$bunfs/root/. */
const compiled = import.meta.url.includes('/$bunfs/');

/**
 * Where a worker's script is, by its path under src/: inside the compiled binary, where scripts/build.ts makes
 * it an entrypoint under /$bunfs/root/, or under src/ when run from the sources.
 */
export function workerScript(pathInSrc: string): string {
  if (compiled) return `/$bunfs/root/${pathInSrc}`;
  return new URL(`../${pathInSrc}`, import.meta.url).href; // this file is in src/base/
}

/**
 * Where the program is (src/program.ts): a script of its own inside the compiled binary as in the sources, so that
 * main.ts can set its priority before loading it (a module main.ts imported by name would be bundled into
 * main.ts's own code, read before its first line runs).
 */
export function programScript(): string {
  return workerScript('program.ts');
}

/** The command that runs this program again: the compiled executable itself, or bun with src/main.ts. */
export function selfCommand(): string[] {
  if (compiled) return [process.execPath];
  return [process.execPath, new URL('../main.ts', import.meta.url).pathname];
}

/** What a one-job worker answers, once. */
export type WorkerReply<T> = { ok: true; built: T } | { ok: false; error: string };

/** A message of a job's worker before its reply: handed to the job's `progress`, which may answer the worker. */
type WorkerProgress<P> = { progress: P };
type ProgressHandler = (progress: unknown, answer: (message: unknown, transfer: ArrayBuffer[]) => void) => void;

/** The one-job workers not yet ended (see jobWorkersEnded). */
const liveJobs = new Set<Promise<void>>();

/**
 * One job on a new worker thread: `request` is posted, the worker answers one WorkerReply, and is ended on it.
 * Before it, the worker may post WorkerProgress messages, handed to `progress` (which may answer them).
 * `cancel` drops the answer; the worker is still ended only once it answers, never mid-job: these jobs read LMDB,
 * and a thread ended inside an LMDB call can bring the whole process down (seen: a NAPI fatal error, exit 134,
 * when a daemon stopped while its start-up reads ran). The jobs answer after they let go of the store.
 * `name` goes in the error of a worker that failed.
 */
export function workerJob<T>(
  script: string,
  request: unknown,
  name: string,
  progress?: ProgressHandler,
): { done: Promise<T>; cancel(): void } {
  const worker = new Worker(script);
  const ended = new Promise<void>((resolve) => worker.addEventListener('close', () => resolve(), { once: true }));
  liveJobs.add(ended);
  void ended.then(() => liveJobs.delete(ended));
  let settled = false;
  const done = new Promise<T>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<WorkerReply<T> | WorkerProgress<unknown>>) => {
      if ('progress' in event.data) {
        // answered even after a cancel: the worker goes on to its reply, and is ended only then
        progress?.(event.data.progress, (message, transfer) => worker.postMessage(message, transfer));
        return;
      }
      void worker.terminate();
      if (settled) return;
      settled = true;
      if (event.data.ok) resolve(event.data.built);
      else reject(new Error(event.data.error));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      void worker.terminate();
      if (settled) return;
      settled = true;
      reject(new Error(`${name} failed: ${event.message}`));
    };
  });
  worker.postMessage(request);
  return {
    done,
    cancel: () => {
      settled = true;
    },
  };
}

/**
 * Resolves once no one-job worker runs (true; one started meanwhile is waited for too), or after `timeoutMs`
 * (false): a daemon closing waits for them, so that the process never exits while one of them is inside LMDB.
 */
export function jobWorkersEnded(timeoutMs: number): Promise<boolean> {
  return settlesWithin(allJobsEnded(), timeoutMs);
}

async function allJobsEnded(): Promise<void> {
  while (liveJobs.size > 0) await Promise.all(liveJobs);
}
