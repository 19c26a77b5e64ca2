import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type FileEntry, Store } from '../../src/store/index.ts';
import { BUN, REPO, runCli, seeded } from '../support/fixtures.ts';

/**
 * Shared parts of the crash tests (test/reliability/crash-*.test.ts, docs/reliability.md): the kill count and the
 * seed from the environment, a child process whose output lines can be awaited as they arrive (kills are timed
 * from what the program itself prints, not from a clock), deposit files made from a seeded generator, and the
 * comparisons the tests end with.
 *
 * CRASH_KILLS (default 5; `make soak` sets 50) and CRASH_SEED (default random) steer every crash test. The seed,
 * and for each kill the figure it was timed from and its delay, are printed, so a failure replays with
 * `CRASH_SEED=<seed> bun test test/reliability/crash-<name>.test.ts`: the same deposits and feeds, and the same
 * draws for each kill (its k or mark, its delay). Where exactly a kill lands also depends on the machine's pace.
 */

export interface CrashSettings {
  kills: number;
  seed: number;
  /** the RNG of this test: everything random in it (deposits, k, delays) comes from here, in a fixed order */
  rng: () => number;
  /** prints a line prefixed with the test's name */
  say(text: string): void;
}

export function crashSettings(name: string, env: Record<string, string | undefined> = process.env): CrashSettings {
  const kills = env.CRASH_KILLS === undefined || env.CRASH_KILLS === '' ? 5 : Number(env.CRASH_KILLS);
  if (!Number.isInteger(kills) || kills < 1)
    throw new Error(`CRASH_KILLS must be a positive integer, not ${JSON.stringify(env.CRASH_KILLS)}`);
  const seed =
    env.CRASH_SEED === undefined || env.CRASH_SEED === ''
      ? Math.floor(Math.random() * 2 ** 32)
      : Number(env.CRASH_SEED);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new Error(`CRASH_SEED must be an integer in [0, 2^32), not ${JSON.stringify(env.CRASH_SEED)}`);
  const say = (text: string) => console.log(`[${name}] ${text}`);
  say(
    `CRASH_SEED=${seed} CRASH_KILLS=${kills} (replay: CRASH_SEED=${seed} CRASH_KILLS=${kills} bun test test/reliability/${name}.test.ts)`,
  );
  return { kills, seed, rng: seeded(seed), say };
}

/** An integer in [lo, hi] from `rng`. */
export function between(rng: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** An RFC 4122 version-4 UUID from `rng` (deposit names are part of what a seed replays). */
export function seededUuid(rng: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(rng() * 4)]!;
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The program (`bun src/main.ts ARGS`) as a child process whose stderr and stdout lines are kept as they arrive,
 * so a test can wait for the n-th line matching something and act at once (no polling interval between the line
 * and the kill). With `tty`, the child runs on a pseudo-terminal (its stdout and stderr both), as an operator's
 * shell would run it: the CLI then prints its progress lines.
 */
export class Child {
  readonly proc: ReturnType<typeof Bun.spawn>;
  readonly lines: string[] = [];
  private waiters: { test: (line: string) => boolean; n: number; seen: number; resolve: (line: string) => void }[] = [];
  private readonly reading: Promise<unknown>;
  private readonly started = performance.now();
  /** ms from spawn to each line, in order */
  readonly at: number[] = [];

  constructor(args: string[], opts: { env?: Record<string, string>; tty?: boolean } = {}) {
    const env = { ...process.env, ...opts.env };
    if (opts.tty) {
      let rest = '';
      let closed!: () => void;
      const done = new Promise<void>((r) => (closed = r));
      this.proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), ...args], {
        cwd: REPO,
        env,
        terminal: {
          cols: 200,
          rows: 50,
          data: (_t, data) => {
            // a progress line is rewritten in place with \r; each rewrite counts as a line here
            rest += new TextDecoder().decode(data);
            const parts = rest.split(/\r\n|\r|\n/);
            rest = parts.pop()!;
            for (const p of parts) this.take(p);
          },
          exit: () => closed(),
        },
      });
      this.reading = Promise.race([done, this.proc.exited.then(() => Bun.sleep(200))]).then(() => {
        if (rest !== '') this.take(rest);
      });
    } else {
      this.proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), ...args], {
        cwd: REPO,
        env,
        stdout: 'pipe',
        stderr: 'pipe',
      });
      this.reading = Promise.all([
        this.pump(this.proc.stderr as ReadableStream<Uint8Array>),
        this.pump(this.proc.stdout as ReadableStream<Uint8Array>),
      ]);
    }
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let rest = '';
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true });
      const parts = rest.split('\n');
      rest = parts.pop()!;
      for (const p of parts) this.take(p);
    }
    if (rest !== '') this.take(rest);
  }

  private take(line: string): void {
    // eslint-disable-next-line no-control-regex
    const clean = line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    if (clean.trim() === '') return;
    this.lines.push(clean);
    this.at.push(performance.now() - this.started);
    for (const w of [...this.waiters]) {
      if (!w.test(clean)) continue;
      if (++w.seen < w.n) continue;
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(clean);
    }
  }

  /**
   * Resolves with the n-th line (counted from the child's start) that passes `test`, the moment it arrives;
   * rejects when the child exits before, or after `timeoutMs`.
   */
  nth(test: (line: string) => boolean, n: number, timeoutMs = 60_000): Promise<string> {
    const already = this.lines.filter(test);
    if (already.length >= n) return Promise.resolve(already[n - 1]!);
    return new Promise<string>((resolve, reject) => {
      const w = { test, n, seen: already.length, resolve: (l: string) => (clearTimeout(timer), resolve(l)) };
      this.waiters.push(w);
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for line ${n} matching ${test}; last lines:\n${this.lines.slice(-10).join('\n')}`,
          ),
        );
      }, timeoutMs);
      void this.proc.exited.then(async (code) => {
        await this.reading;
        if (!this.waiters.includes(w)) return;
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(timer);
        reject(new ExitedEarly(code, n, this.lines.filter(test).length, this.lines.slice(-10)));
      });
    });
  }

  /** SIGKILL; resolves once the child is gone and everything it wrote has been read. */
  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.proc.exited;
    await this.reading;
  }

  /** Waits for the child's own exit (no signal); returns its code once its output is read. */
  async exit(): Promise<number> {
    const code = await this.proc.exited;
    await this.reading;
    return code;
  }

  /** SIGTERM, then the exit code. */
  async stop(): Promise<number> {
    this.proc.kill('SIGTERM');
    return this.exit();
  }

  get exited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }
}

/** The children a test started: each kept as it starts, every one still running killed after the test (afterEach). */
export class Children {
  private list: Child[] = [];

  /** `doi-holdings ARGS` started and kept. */
  start(args: string[], opts?: ConstructorParameters<typeof Child>[1]): Child {
    return this.keep(new Child(args, opts));
  }

  keep(c: Child): Child {
    this.list.push(c);
    return c;
  }

  async killAll(): Promise<void> {
    for (const c of this.list) if (!c.exited) await c.kill();
    this.list = [];
  }
}

export class ExitedEarly extends Error {
  constructor(
    readonly code: number | null,
    readonly wanted: number,
    readonly seen: number,
    last: string[],
  ) {
    super(
      `the child exited (${code}) after ${seen} of the ${wanted} lines waited for; last lines:\n${last.join('\n')}`,
    );
  }
}

/** A test for log lines of one event (JSON lines as jsonLogger writes them). */
export const isEvent = (event: string) => (line: string) => line.includes(`"event":"${event}"`);

/** `--dump --history` of a config's store, the exact stdout bytes. */
export async function dumpHistory(
  configPath: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<string> {
  const r = await runCli(['--dump', '--history', '--config', configPath, ...extra], env);
  if (r.code !== 0) throw new Error(`--dump --history failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/**
 * Byte-for-byte equality of two dumps, reported as the first line that differs (the dumps have hundreds of
 * thousands of lines: a plain toBe would print them all).
 */
export function firstDifference(actual: string, expected: string): string | undefined {
  if (actual === expected) return undefined;
  const a = actual.split('\n');
  const e = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, e.length); i++)
    if (a[i] !== e[i])
      return `line ${i + 1} of ${a.length} (clean run: ${e.length} lines) differs:\n  got      ${a[i] ?? '(none)'}\n  expected ${e[i] ?? '(none)'}`;
  return 'the bytes differ but no line does (line endings?)';
}

/** The ledger of one environment, read from a store no process is writing (opened read-only, as a second process would). */
export async function readLedger(
  storeDir: string,
  env: 'production' | 'staging' = 'production',
): Promise<{ entries: FileEntry[]; seqKeys: Map<number, string | undefined> }> {
  const store = Store.open(storeDir, env, { mapSizeBytes: 1 << 30, readOnly: true });
  try {
    const entries = [...store.ledger()];
    const seqKeys = new Map<number, string | undefined>();
    for (const e of entries) if (e.seq !== undefined) seqKeys.set(e.seq, store.fileKeyOfSeq(e.seq));
    return { entries, seqKeys };
  } finally {
    await store.close();
  }
}

/**
 * The ledger holds exactly `keys` (in that apply order): each applied once, with the apply sequence numbers
 * 1..n in that order and `fileSeqs` naming each back. Returns the problems found (empty: all good).
 */
export function ledgerProblems(
  ledger: { entries: FileEntry[]; seqKeys: Map<number, string | undefined> },
  keys: readonly string[],
): string[] {
  const problems: string[] = [];
  const byKey = new Map(ledger.entries.map((e) => [e.key, e]));
  if (ledger.entries.length !== keys.length)
    problems.push(`${ledger.entries.length} ledger entries for ${keys.length} files`);
  keys.forEach((key, i) => {
    const e = byKey.get(key);
    if (!e) problems.push(`${key}: not in the ledger`);
    else if (e.outcome !== 'applied') problems.push(`${key}: ${e.outcome} (${e.code}: ${e.message})`);
    else if (e.seq !== i + 1)
      problems.push(
        `${key}: apply sequence number ${e.seq}, expected ${i + 1} (its place in (LastModified, key) order)`,
      );
    else if (ledger.seqKeys.get(e.seq) !== key)
      problems.push(`${key}: fileSeqs[${e.seq}] names ${ledger.seqKeys.get(e.seq)}`);
  });
  for (const e of ledger.entries)
    if (!keys.includes(e.key)) problems.push(`${e.key}: in the ledger but never deposited`);
  return problems;
}

/** Writes gzip NDJSON bytes to `<root>/<key>` with the given mtime (ms). */
export function placeFile(root: string, key: string, bytes: Uint8Array, mtimeMs: number): void {
  const path = join(root, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
}

export interface Deposit {
  key: string;
  platform: string;
  /** the file's LastModified, ms */
  mtimeMs: number;
  bytes: Uint8Array;
  /** lines by kind, for the printed figures */
  ops: {
    add: number;
    update: number;
    remove: number;
    same: number;
    noopRemove: number;
    rejected: number;
    superseded: number;
  };
}

/**
 * `files` deposit files of `records` lines each, generated in apply order from `rng`, over a pool of DOIs shared by
 * the platforms so the files overlap: a later file of a platform updates (access type, links, the DOI's letter
 * case), re-deposits unchanged, or removes (`deleted`) DOIs that platform's earlier files added, re-adds removed
 * ones, and removes some it never held (no-op removals). A few lines per file are invalid (reported, the rest
 * applied) and a few DOIs appear twice in a file (the later line wins). LastModified is spread a second or more
 * apart, except pairs of files that share a second, so that the key decides their order.
 */
export function generateDeposits(
  rng: () => number,
  opts: {
    files: number;
    records: number;
    platforms: readonly string[];
    pool: number;
    baseSeconds?: number;
    prefix?: string;
  },
): Deposit[] {
  const { files, records, platforms, pool } = opts;
  const prefix = opts.prefix ?? '10.5555/crash';
  const held = new Map<string, Map<number, { access: string; vor: number; upper: boolean }>>(
    platforms.map((p) => [p, new Map()]),
  );
  const ACCESS = ['paid', 'open', 'free', 'permFree'];
  const doiOf = (n: number, upper: boolean) => `${prefix}.${upper ? 'X' : 'x'}${n}`;
  const lineOf = (n: number, s: { access: string; vor: number; upper: boolean }) => {
    const doi = doiOf(n, s.upper);
    const line: Record<string, unknown> = { doi, accessType: s.access };
    if (s.vor > 0)
      line.vor = Array.from({ length: s.vor }, (_, i) => ({
        url: `https://pub.example/${i ? 'html' : 'pdf'}/${doi}`,
        contentType: i ? 'text/html' : 'application/pdf',
      }));
    return JSON.stringify(line);
  };
  // LastModified: whole seconds, 1 to 90 s apart; every seventh file shares its predecessor's second
  let t = (opts.baseSeconds ?? 1_750_000_000) * 1000;
  const stamps: number[] = [];
  for (let f = 0; f < files; f++) {
    if (f > 0 && f % 7 !== 0) t += between(rng, 1, 90) * 1000;
    stamps.push(t);
  }
  // names first, so that files sharing a second are generated in their apply (key) order
  const names = Array.from({ length: files }, (_, f) => ({
    f,
    platform: platforms[between(rng, 0, platforms.length - 1)]!,
    name: `${seededUuid(rng)}.jsonl.gz`,
  }));
  const ordered = [...names].sort(
    (a, b) => stamps[a.f]! - stamps[b.f]! || (`${a.platform}/${a.name}` < `${b.platform}/${b.name}` ? -1 : 1),
  );
  const out: Deposit[] = [];
  for (const [i, { platform, name }] of ordered.entries()) {
    const mine = held.get(platform)!;
    const ops = { add: 0, update: 0, remove: 0, same: 0, noopRemove: 0, rejected: 0, superseded: 0 };
    const lines: string[] = [];
    const picked = new Set<number>();
    while (lines.length < records) {
      const roll = rng();
      if (roll < 0.001) {
        lines.push(
          roll < 0.0005
            ? JSON.stringify({ doi: 'not-a-doi', accessType: 'open' })
            : JSON.stringify({ doi: `${prefix}.bad`, accessType: 'sometimes' }),
        );
        ops.rejected++;
        continue;
      }
      const n = between(rng, 0, pool - 1);
      if (picked.has(n)) {
        if (rng() < 0.02)
          ops.superseded++; // a second line for a DOI of this file: the later line wins
        else continue;
      }
      picked.add(n);
      const before = mine.get(n);
      const r = rng();
      if (before && before.access !== 'gone') {
        if (r < 0.15) {
          lines.push(JSON.stringify({ doi: doiOf(n, before.upper), deleted: true }));
          mine.set(n, { ...before, access: 'gone' });
          ops.remove++;
        } else if (r < 0.6) {
          const next = {
            access: ACCESS[between(rng, 0, 3)]!,
            vor: between(rng, 0, 2),
            upper: rng() < 0.1 ? !before.upper : before.upper,
          };
          lines.push(lineOf(n, next));
          mine.set(n, next);
          ops.update++;
        } else {
          lines.push(lineOf(n, before));
          ops.same++;
        }
      } else if (r < 0.12) {
        lines.push(JSON.stringify({ doi: doiOf(n, false), deleted: true }));
        ops.noopRemove++;
      } else {
        const next = { access: ACCESS[between(rng, 0, 3)]!, vor: between(rng, 0, 2), upper: rng() < 0.05 };
        lines.push(lineOf(n, next));
        mine.set(n, next);
        ops.add++;
      }
    }
    out.push({
      key: `${platform}/${name}`,
      platform,
      mtimeMs: stamps[i]!,
      bytes: Bun.gzipSync(Buffer.from(`${lines.join('\n')}\n`), { level: 1 }),
      ops,
    });
  }
  return out;
}

/** The sum of the deposits' line kinds, for the printed figures. */
export function opsTotal(deposits: readonly Deposit[]): Deposit['ops'] {
  const t = { add: 0, update: 0, remove: 0, same: 0, noopRemove: 0, rejected: 0, superseded: 0 };
  for (const d of deposits) for (const k of Object.keys(t) as (keyof typeof t)[]) t[k] += d.ops[k];
  return t;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
