/** Other threads and processes of this program: where a worker's script is, one job on a worker, this program again. */

/** Inside the compiled binary (bun build --compile), where the sources sit under /$bunfs/root/. */
const compiled = import.meta.url.includes('/$bunfs/');

/**
 * Where a worker's script is, by its path under src/: inside the compiled binary, where scripts/build.ts makes
 * it an entrypoint under /$bunfs/root/, or beside this file when run from the sources.
 */
export function workerScript(pathInSrc: string): string {
  if (compiled) return `/$bunfs/root/${pathInSrc}`;
  return new URL(`./${pathInSrc}`, import.meta.url).href;
}

/** The command that runs this program again: the compiled executable itself, or bun with src/main.ts. */
export function selfCommand(): string[] {
  if (compiled) return [process.execPath];
  return [process.execPath, new URL('./main.ts', import.meta.url).pathname];
}

/** What a one-job worker answers, once. */
export type WorkerReply<T> = { ok: true; built: T } | { ok: false; error: string };

/**
 * One job on a new worker thread: `request` is posted, the worker answers one WorkerReply, and is ended on it.
 * `cancel` ends it sooner (its answer is then never taken). `name` goes in the error of a worker that failed.
 */
export function workerJob<T>(script: string, request: unknown, name: string): { done: Promise<T>; cancel(): void } {
  const worker = new Worker(script);
  let settled = false;
  const done = new Promise<T>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<WorkerReply<T>>) => {
      settled = true;
      void worker.terminate();
      if (event.data.ok) resolve(event.data.built);
      else reject(new Error(event.data.error));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(new Error(`${name} failed: ${event.message}`));
    };
  });
  worker.postMessage(request);
  return {
    done,
    cancel: () => {
      settled = true;
      void worker.terminate();
    },
  };
}
