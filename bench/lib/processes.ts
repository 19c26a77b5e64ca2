import { REPO } from './ingest-data.ts';
import { cpuSeconds } from './process-probes.ts';

/** The benchmarks' child processes (the daemon, platform, ceiling and fake Crossref servers): started, waited for, signalled, stopped. */

export interface Started {
  url: string;
  pid: number;
  output(): string;
  signal(sig: NodeJS.Signals): void;
  stop(): Promise<void>;
}

const running = new Set<Started>();

/**
 * Starts `cmd` in the repository and waits (up to 2 minutes) until `ready` finds its URL in its output, looking
 * every `pollMs`.
 */
export async function startProcess(
  cmd: string[],
  ready: (out: string) => string | undefined,
  env?: Record<string, string>,
  pollMs = 50,
): Promise<Started> {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', cwd: REPO, env: { ...process.env, ...env } });
  let out = '';
  const decoder = new TextDecoder();
  for (const s of [proc.stdout, proc.stderr])
    void (async () => {
      for await (const c of s) out += decoder.decode(c);
    })();
  const started: Started = {
    url: '',
    pid: proc.pid,
    output: () => out,
    signal: (sig) => proc.kill(sig),
    async stop() {
      running.delete(started);
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
  running.add(started);
  const deadline = Date.now() + 120_000;
  let url: string | undefined;
  while (!(url = ready(out))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await started.stop();
      throw new Error(`${cmd.join(' ')} did not start: ${out.slice(-2000)}`);
    }
    await Bun.sleep(pollMs);
  }
  started.url = url;
  return started;
}

/**
 * Runs a benchmark's `main`, then `cleanup` however it ends: normally, on an error (printed; exit code 1), or on
 * SIGINT/SIGTERM (exit 130/143), so no daemon or load generator outlives the benchmark.
 */
export async function runBench(main: () => Promise<void>, cleanup: () => Promise<void>): Promise<void> {
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().finally(() => process.exit(143)));
  try {
    await main();
  } catch (e) {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** Stops every process still running (in a finally, or on a signal). */
export async function stopAll(): Promise<void> {
  for (const p of [...running]) await p.stop();
}

/**
 * Waits until the daemon has read its entitlement indexes (/healthz: every environment "complete"), and then
 * until it is at rest (under 5% of a core over 300 ms): it reads those, the Updates API's index and the prefix
 * index on worker threads after it listens, and a benchmark measures the daemon at rest, not warming.
 */
export async function indexesRead(daemon: { url: string; pid: number }): Promise<void> {
  await indexesComplete(daemon.url);
  await atRest(daemon.pid);
}

/** Polls /healthz (every `pollMs`) until every environment's entitlement index is "complete"; throws after `timeoutMs`. */
export async function indexesComplete(url: string, timeoutMs = 120_000, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // the body: {status, <env>: {..., entitlementIndex}, ...}
    const h = (await (await fetch(`${url}/healthz`)).json()) as Record<string, unknown>;
    const envs = Object.values(h).filter(
      (v): v is { entitlementIndex: string } => typeof v === 'object' && v !== null && 'entitlementIndex' in v,
    );
    if (envs.length > 0 && envs.every((e) => e.entitlementIndex === 'complete')) return;
    if (Date.now() > deadline)
      throw new Error(`the entitlement index was not read in ${timeoutMs / 60_000} minutes: ${JSON.stringify(h)}`);
    await Bun.sleep(pollMs);
  }
}

/** Waits until the process uses under 5% of a core over 300 ms; throws after `timeoutMs`. */
export async function atRest(pid: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = cpuSeconds(pid);
    await Bun.sleep(300);
    if (cpuSeconds(pid) - before < 0.015) return;
    if (Date.now() > deadline) throw new Error(`the daemon did not come to rest in ${timeoutMs / 60_000} minutes`);
  }
}
