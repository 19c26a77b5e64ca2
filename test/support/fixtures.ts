import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Shared test fixtures: temp folders, deposit files, waiting for conditions, running the real program. */

export const REPO = join(import.meta.dir, '..', '..');
export const BUN = process.execPath;

export function tempDir(prefix = 'doi-holdings-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function gzLines(lines: readonly (object | string)[], ending = '\n'): Uint8Array {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join(ending);
  return Bun.gzipSync(Buffer.from(text));
}

let counter = 0;
/** A fresh RFC 4122-looking UUID, deterministic per run order so keys sort predictably. */
export function uuid(): string {
  counter++;
  const hex = counter.toString(16).padStart(12, '0');
  return `00000000-0000-4000-8000-${hex}`;
}

/** Writes `<root>/<platform>/<uuid>.jsonl.gz` with the given mtime (seconds); returns the bucket key. */
export function writeDeposit(
  root: string,
  platform: string,
  lines: readonly (object | string)[],
  opts: { mtime?: number; name?: string; bytes?: Uint8Array } = {},
): string {
  const key = `${platform}/${opts.name ?? `${uuid()}.jsonl.gz`}`;
  const path = join(root, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, opts.bytes ?? gzLines(lines));
  if (opts.mtime !== undefined) utimesSync(path, opts.mtime, opts.mtime);
  return key;
}

type Falsy = undefined | null | false | 0 | '';
export async function waitFor<T>(
  probe: () => T | Falsy | Promise<T | Falsy>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | Falsy;
  while (Date.now() < deadline) {
    last = await probe();
    if (last) return last as T;
    await Bun.sleep(25);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last value: ${JSON.stringify(last)})`);
}

export interface TestConfig {
  dir: string;
  path: string;
  bucket: string;
  staging: string;
  store: string;
}

/**
 * [ingest] of the test config. A backlog of a few dozen files applies in several passes (the crash tests land
 * kills between them), not in one sorted pass unless a test asks for it.
 */
export const TEST_INGEST = { settleMs: 50, retryBaseMs: 20, maxTries: 3, passFiles: 4, sortedPassFiles: 1000 };

/**
 * A config file in `dir` with local production and staging buckets and platforms acme + beta. `ingest` sets [ingest] fields beside the defaults
 * here (a test that takes a sorted pass sets sortedPassFiles, and passChunkRecords for small chunks).
 */
export function writeConfig(dir: string, extra = '', ingest: Record<string, number> = {}): TestConfig {
  const bucket = join(dir, 'bucket');
  const staging = join(dir, 'staging-bucket');
  const store = join(dir, 'db');
  const path = join(dir, 'test.toml');
  writeFileSync(
    path,
    `[server]
listen = "127.0.0.1:0"

[store]
dir = "db"
mapSizeGiB = 1

[ingest]
${Object.entries({ ...TEST_INGEST, ...ingest })
  .map(([k, v]) => `${k} = ${v}\n`)
  .join('')}
[buckets.production]
kind = "local"
path = "bucket"

[buckets.staging]
kind = "local"
path = "staging-bucket"

[[platforms]]
name = "acme"

[[platforms]]
name = "beta"

[[integrators]]
name = "tester"
apiKey = "test-key-123"
updates = true
${extra}`,
  );
  mkdirSync(bucket, { recursive: true });
  mkdirSync(staging, { recursive: true });
  return { dir, path, bucket, staging, store };
}

/**
 * Sets [server] settings of a config written by writeConfig (`listen` replaced, others added), e.g.
 * `{ listen: '127.0.0.1:8123', drainSeconds: 1 }`.
 */
export function setServer(cfg: TestConfig, settings: Record<string, string | number>): void {
  const text = readFileSync(cfg.path, 'utf8');
  const table = /^\[server\]\nlisten = "127\.0\.0\.1:0"$/m;
  if (!table.test(text)) throw new Error(`no [server] table as writeConfig writes it in ${cfg.path}`);
  const lines = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === 'string' ? JSON.stringify(v) : v}`);
  const listen = settings.listen === undefined ? ['listen = "127.0.0.1:0"'] : [];
  writeFileSync(cfg.path, text.replace(table, ['[server]', ...listen, ...lines].join('\n')));
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
}

/** Runs the real program (`bun src/main.ts ARGS`) as a separate process. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr, lines: stdout.split('\n').filter((l) => l !== '') };
}

export async function dump(configPath: string, extra: string[] = []): Promise<Record<string, unknown>[]> {
  const r = await runCli(['--dump', '--config', configPath, ...extra]);
  if (r.code !== 0) throw new Error(`--dump failed (${r.code}): ${r.stderr}`);
  return r.lines.map((l) => JSON.parse(l));
}

/** The daemon as a real process; `stop()` sends SIGTERM and waits. */
export function startDaemon(
  configPath: string,
  env: Record<string, string> = {},
): {
  stop(): Promise<number>;
  log(): string;
  signal(name: NodeJS.Signals): void;
  pid: number;
  exited: Promise<number>;
} {
  let log = '';
  const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--config', configPath], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) log += decoder.decode(chunk, { stream: true });
  };
  const readers = Promise.all([read(proc.stderr), read(proc.stdout)]);
  // the process can end before its last lines are read from the pipes: an exit is told once they are
  const exited = proc.exited.then(async (code) => {
    await readers;
    return code;
  });
  return {
    async stop() {
      proc.kill('SIGTERM');
      return exited;
    },
    log: () => log,
    signal: (name) => proc.kill(name),
    pid: proc.pid,
    /** the exit code once the process ends by itself, its output read to the end */
    exited,
  };
}

export async function waitForLog(daemon: { log(): string }, needle: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(() => daemon.log().includes(needle), `log line containing ${needle}`, timeoutMs);
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): fuzz tests that fail can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
