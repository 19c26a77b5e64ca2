import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { REPO, tempDir, waitFor } from '../support/fixtures.ts';

/**
 * README.md runs as written (README, "The shell blocks of this README"): its shell blocks, in order, each in a
 * fresh bash from the root of a fresh copy of the repository (the files git tracks or would track, as they are
 * in this checkout, and a link to this checkout's node_modules, so nothing is installed again), against the
 * daemon and the example platform the blocks themselves start in their "terminals". Each block's output (stdout
 * and stderr together, as a terminal shows them) must be the one the README shows beneath it, but for what
 * legitimately varies, by this normalisation and nothing else:
 * - the ports: the README's 127.0.0.1:8080 and :8081 are free ports here (in the blocks and the copy's conf/*.toml),
 *   written back as the README's in the output;
 * - times (ISO 8601, to the second or finer) and UUIDs, on both sides;
 * - `...` in the shown output stands for any text within a line, and in a `json` output block a line that starts
 *   with a space goes on from the line above; a CR before a line's end (HTTP headers) is dropped.
 */

type Marker =
  | { kind: 'run' }
  | { kind: 'poll' }
  | { kind: 'output' }
  | { kind: 'terminal'; name: string; until: string }
  | { kind: 'not run'; why: string };

interface Block {
  /** the line of its opening fence, from 1 */
  line: number;
  lang: string;
  text: string;
  marker?: Marker;
}

/** A block to run, with the output block that follows it when there is one. */
interface Step {
  block: Block;
  shown?: Block;
}

const MARKER = /^<!-- readme-test: (.*) -->$/;

function parseMarker(text: string): Marker | string {
  if (text === 'run' || text === 'poll' || text === 'output') return { kind: text };
  const terminal = /^terminal (\S+) until (.+)$/.exec(text);
  if (terminal) return { kind: 'terminal', name: terminal[1]!, until: terminal[2]! };
  const notRun = /^not run \((.+)\)$/.exec(text);
  if (notRun) return { kind: 'not run', why: notRun[1]! };
  return `unknown marker "${text}": run, poll, output, terminal N until TEXT, not run (why)`;
}

/** The fenced blocks of a Markdown text, each with the marker on the last non-blank line before it. */
function readBlocks(markdown: string): { blocks: Block[]; problems: string[] } {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) {
      if (
        MARKER.test(lines[i]!) &&
        !lines
          .slice(i + 1)
          .find((l) => l.trim() !== '')
          ?.startsWith('```')
      )
        problems.push(`README.md:${i + 1}: a readme-test marker must come right before a fenced block`);
      continue;
    }
    const start = i;
    let j = i + 1;
    while (j < lines.length && lines[j] !== '```') j++;
    if (j === lines.length) problems.push(`README.md:${start + 1}: the block is never closed`);
    let k = start - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const found = k >= 0 ? MARKER.exec(lines[k]!) : null;
    const marker = found ? parseMarker(found[1]!) : undefined;
    if (typeof marker === 'string') problems.push(`README.md:${k + 1}: ${marker}`);
    blocks.push({
      line: start + 1,
      lang: open[1]!,
      text: lines.slice(start + 1, j).join('\n'),
      marker: typeof marker === 'string' ? undefined : marker,
    });
    i = j;
  }
  return { blocks, problems };
}

/** The blocks to run, in order; every `sh` block must say whether it runs, and every output block follow one. */
function readSteps(markdown: string): { steps: Step[]; problems: string[] } {
  const { blocks, problems } = readBlocks(markdown);
  const steps: Step[] = [];
  blocks.forEach((block, i) => {
    const kind = block.marker?.kind;
    if (block.lang === 'sh' && (kind === undefined || kind === 'output'))
      problems.push(`README.md:${block.line}: a sh block needs a readme-test marker (run, poll, terminal, not run)`);
    if (block.lang !== 'sh' && kind !== undefined && kind !== 'output')
      problems.push(`README.md:${block.line}: only sh blocks run ("${kind}" on a ${block.lang || 'plain'} block)`);
    if (kind === 'output' && !['run', 'poll'].includes(blocks[i - 1]?.marker?.kind ?? ''))
      problems.push(`README.md:${block.line}: an output block must follow a run or poll block`);
    if (block.lang === 'sh' && (kind === 'run' || kind === 'poll' || kind === 'terminal')) {
      const next = blocks[i + 1];
      steps.push({ block, shown: kind !== 'terminal' && next?.marker?.kind === 'output' ? next : undefined });
    }
  });
  return { steps, problems };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g;

function normalise(text: string): string {
  return text.replace(/\r$/gm, '').replace(UUID, '<uuid>').replace(TIME, '<time>').replace(/\n+$/, '');
}

/** The shown output as one would compare it by eye: continued json lines joined, times and UUIDs as placeholders. */
function shownOutput(shown: Pick<Block, 'lang' | 'text'> | undefined): string {
  if (!shown) return '';
  return normalise(shown.lang === 'json' ? shown.text.replace(/\n[ \t]+/g, '') : shown.text);
}

/** Whether a block's output (ports already written back) is the one shown: `...` stands for any text within a line. */
function outputMatches(printed: string, shown: Pick<Block, 'lang' | 'text'> | undefined): boolean {
  const pattern = shownOutput(shown)
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*?');
  return new RegExp(`^${pattern}$`).test(normalise(printed));
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A bash running one block, in a process group of its own (what Ctrl-C reaches), stdout and stderr in one. */
class Shell {
  output = '';
  exitCode: number | null = null;
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;

  constructor(script: string, cwd: string, env: Record<string, string>) {
    this.child = spawn('bash', ['-c', `exec 2>&1\n${script}`], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const take = (chunk: Buffer) => void (this.output += chunk.toString('utf8'));
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    this.exited = new Promise((resolve) =>
      this.child.on('close', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : -1);
        resolve();
      }),
    );
  }

  /** Whether any process of its group is still there. */
  private groupAlive(): boolean {
    try {
      process.kill(-this.child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** Stops the group as Ctrl-C does, then (should it outlive 30 s) with SIGKILL; resolves once none of it is left. */
  async stop(): Promise<void> {
    if (this.groupAlive()) process.kill(-this.child.pid!, 'SIGINT');
    try {
      await waitFor(() => this.exitCode !== null && !this.groupAlive(), 'the block to stop after Ctrl-C', 30_000);
    } catch (e) {
      if (this.groupAlive()) process.kill(-this.child.pid!, 'SIGKILL');
      await this.exited;
      throw e;
    }
  }

  /** Runs it to its end, for `ms` at most. */
  async finish(ms: number, where: string): Promise<void> {
    try {
      await waitFor(() => this.exitCode !== null, `${where} to end`, ms);
    } catch (e) {
      await this.stop().catch(() => undefined);
      throw new Error(`${(e as Error).message}; it printed:\n${this.output}`);
    }
  }
}

/** This checkout's tracked and trackable files, as they are now, in `to`, with a link to its node_modules. */
function copyRepository(to: string): void {
  const listed = Bun.spawnSync(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
  });
  if (listed.exitCode !== 0) throw new Error(`git ls-files failed in ${REPO}: ${listed.stderr.toString()}`);
  for (const file of listed.stdout.toString().split('\0')) {
    const from = join(REPO, file);
    if (file === '' || file === 'node_modules' || !existsSync(from)) continue;
    const target = join(to, file);
    mkdirSync(dirname(target), { recursive: true });
    if (lstatSync(from).isSymbolicLink()) symlinkSync(readlinkSync(from), target);
    else {
      copyFileSync(from, target);
      chmodSync(target, statSync(from).mode & 0o7777);
    }
  }
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(to, 'node_modules'));
  // `make run` and ./doi-holdings install when package.json is newer than the install's stamp: the copy's files
  // are new, the install is not. Dated before the stamp, the copy uses the install as it is.
  const stamp = join(to, 'node_modules', '.install-stamp');
  if (!existsSync(stamp))
    throw new Error(`${stamp} is missing: run \`make deps\` in ${REPO} first (the copy must not install again)`);
  const before = new Date(statSync(stamp).mtimeMs - 1000);
  for (const f of ['package.json', 'package-lock.json']) utimesSync(join(to, f), before, before);
  const upToDate = Bun.spawnSync(['make', '-s', '-q', 'deps'], { cwd: to, env: blockEnv(to) });
  if (upToDate.exitCode !== 0) throw new Error(`make -q deps in the copy says it would install again (${to})`);
}

/** A newcomer's environment: none of this project's variables, nor those of a make or a test running this. */
function blockEnv(root: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('DOI_HOLDINGS_') || /^(MAKE|MFLAGS|NODE_ENV$|BUN_)/.test(k)) continue;
    env[k] = v;
  }
  env.TMPDIR = join(root, '..', 'tmp');
  return env;
}

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const { steps, problems } = readSteps(readme);

test('every sh block of README.md says whether and how it runs, and the blocks that run show their output', () => {
  expect(problems).toEqual([]);
  // what the newcomer's path goes through: the daemon, a deposit, both APIs, the paid path, the examples
  const run = steps.map((s) => s.block.text).join('\n');
  for (const expected of [
    'make run',
    './doi-holdings --dump',
    'examples/platform.ts',
    '--config conf/example-platform.toml',
    '/v2.2/updates',
    'examples/sync-changes.ts',
    'examples/private-lookup.ts',
    '--import-updates',
  ])
    expect(run).toContain(expected);
  expect(steps.length).toBeGreaterThan(12);
});

test('the comparison allows for times, UUIDs and "..." and for nothing else', () => {
  const shown = {
    lang: 'json',
    text: '{"key":"example/f038f92b-b7b3-4936-a024-bc80473a92e1.jsonl.gz",\n "at":"2026-11-28T16:40:32.952Z","timings":{...},"n":1}',
  };
  const printed =
    '{"key":"example/5502e7ec-5ca9-48a0-996f-f552d832b4fb.jsonl.gz","at":"2027-01-02T03:04:05Z","timings":{"readMs":1.2},"n":1}\n';
  expect(outputMatches(printed, shown)).toBe(true);
  expect(outputMatches(printed.replace('"n":1', '"n":2'), shown)).toBe(false);
  expect(outputMatches(`${printed}one more line\n`, shown)).toBe(false);
  expect(outputMatches(printed.replace('"key"', '"name"'), shown)).toBe(false);
  // "..." stays within its line, and outside json a leading space is the output's own
  expect(outputMatches('a\nb', { lang: 'text', text: 'a...' })).toBe(false);
  expect(outputMatches('a\n  b', { lang: 'text', text: 'a\n  b' })).toBe(true);
  expect(outputMatches('a  b', { lang: 'text', text: 'a\n  b' })).toBe(false);
  expect(outputMatches('', undefined)).toBe(true);
  expect(outputMatches('anything', undefined)).toBe(false);
});

test("conf/example-platform.toml is conf/default.toml with the example platform's Entitlement API plugged in", () => {
  const read = (f: string) => Bun.TOML.parse(readFileSync(join(REPO, 'conf', f), 'utf8')) as Record<string, any>;
  const example = read('example-platform.toml');
  const platform = example.platforms[0];
  expect(platform).toMatchObject({
    name: 'example',
    entitlementUrl: 'http://127.0.0.1:8081/entitlements',
    entitlementSecretEnv: 'DOI_HOLDINGS_EXAMPLE_SECRET',
  });
  example.platforms = [{ name: platform.name }];
  expect(example).toEqual(read('default.toml'));
});

describe('README.md, block by block, in a fresh copy of the repository', () => {
  const dir = tempDir('doi-holdings-readme-');
  const root = join(dir.path, 'doi-holdings');
  /** README port -> the free port used here */
  const ports = new Map<number, number>();
  const terminals = new Map<string, Shell>();
  let env: Record<string, string> = {};
  let failed: string | undefined;

  const toHere = (text: string) =>
    text.replace(/127\.0\.0\.1:(\d+)/g, (all, p: string) => {
      const here = ports.get(Number(p));
      return here === undefined ? all : `127.0.0.1:${here}`;
    });
  const toReadme = (text: string) => {
    for (const [readmePort, here] of ports) text = text.replaceAll(`127.0.0.1:${here}`, `127.0.0.1:${readmePort}`);
    return text;
  };

  beforeAll(async () => {
    mkdirSync(root);
    mkdirSync(join(dir.path, 'tmp'));
    copyRepository(root);
    env = blockEnv(root);
    for (const step of steps)
      for (const [, p] of step.block.text.matchAll(/127\.0\.0\.1:(\d+)/g))
        if (!ports.has(Number(p))) ports.set(Number(p), await freePort());
    for (const name of readdirSync(join(root, 'conf')).filter((f) => f.endsWith('.toml'))) {
      const path = join(root, 'conf', name);
      writeFileSync(path, toHere(readFileSync(path, 'utf8')));
    }
  });

  afterAll(async () => {
    for (const shell of terminals.values()) await shell.stop().catch(() => undefined);
    dir.remove();
  });

  for (const { block, shown } of steps) {
    const marker = block.marker!;
    const where = `README.md:${block.line}`;
    const what = marker.kind === 'terminal' ? `terminal ${marker.name}` : marker.kind;
    test(`${where} (${what}): ${block.text.split('\n')[0]!.slice(0, 80)}`, async () => {
      if (failed) throw new Error(`not run: ${failed} failed before it`);
      failed = where;
      const script = toHere(block.text);
      if (marker.kind === 'terminal') {
        await terminals.get(marker.name)?.stop();
        const shell = new Shell(script, root, env);
        terminals.set(marker.name, shell);
        await waitFor(
          () => {
            if (shell.exitCode !== null)
              throw new Error(`${where}: ended (${shell.exitCode}) before printing ${marker.until}:\n${shell.output}`);
            return shell.output.includes(marker.until);
          },
          `${where} to print ${marker.until}`,
          60_000,
        ).catch((e) => {
          throw new Error(`${(e as Error).message}\nit printed:\n${shell.output}`);
        });
      } else {
        const deadline = Date.now() + (marker.kind === 'poll' ? 30_000 : 0);
        for (;;) {
          const shell = new Shell(script, root, env);
          await shell.finish(45_000, where);
          const printed = toReadme(shell.output);
          const matches = outputMatches(printed, shown);
          if (matches && shell.exitCode === 0) break;
          if (Date.now() < deadline) {
            await Bun.sleep(200);
            continue;
          }
          const others = [...terminals].map(([n, t]) => `--- terminal ${n} so far:\n${t.output.slice(-3000)}`);
          throw new Error(
            `${where}: ${matches ? `exit code ${shell.exitCode}` : 'the output is not the one shown beneath the block'}\n` +
              `--- shown (normalised)\n${shownOutput(shown)}\n--- printed (normalised)\n${normalise(printed)}\n${others.join('\n')}`,
          );
        }
      }
      failed = undefined;
    }, 120_000);
  }
});
