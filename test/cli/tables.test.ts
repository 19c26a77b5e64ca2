import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { listingFor, renderTable } from '../../src/cli/table.ts';
import { ensureDebianTool, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import { BUN, REPO, runCli, type TestConfig, tempDir, writeConfig, writeDeposit } from '../support/fixtures.ts';

describe('renderTable', () => {
  test('columns as wide as their widest cell, numbers to the right, a rule under the header', () => {
    expect(
      renderTable(
        ['platform', 'total', 'note'],
        [
          ['acme', 12, 'x'],
          ['beta-longer', 3, undefined],
        ],
        80,
      ),
    ).toEqual(['platform     total  note', '-----------  -----  ----', 'acme            12  x', 'beta-longer      3']);
  });

  test('a table wider than the terminal gives way in its widest columns, cut cells ending in …', () => {
    const message = 'must be an http(s) URL, starting http:// or https:// (got "ftp://nope")';
    const lines = renderTable(['line', 'code', 'message'], [[3, 'SCHEMA', message]], 40);
    for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(40);
    expect(lines[2]).toBe('   3  SCHEMA  must be an http(s) URL, s…');
  });

  test('line breaks and tabs in a cell do not break the rows apart', () => {
    expect(renderTable(['a'], [['x\ny\tz']], 80)[2]).toBe('x y z');
  });

  test('no terminal escape or bidirectional override in a cell reaches the terminal', () => {
    // ESC [ and its one-byte form CSI (U+009B) begin terminal escapes; U+202E reverses the text after it
    expect(renderTable(['a'], [['x\u001b[2Jy\u009b2Jz\u202eevil']], 80)[2]).toBe('x [2Jy 2Jz evil');
  });

  test('tables only on a terminal without --json; its width, else 80', () => {
    expect(listingFor(false, { isTTY: true, columns: 120 })).toEqual({ tables: true, width: 120 });
    expect(listingFor(false, { isTTY: true })).toEqual({ tables: true, width: 80 });
    expect(listingFor(true, { isTTY: true, columns: 120 })).toEqual({ tables: false });
    expect(listingFor(false, {})).toEqual({ tables: false });
  });
});

/** The four listing commands on a real terminal: util-linux's script(1) gives the program a pseudo-terminal. */
describe('on a terminal and through a pipe', () => {
  let script: string;
  let dir: ReturnType<typeof tempDir>;
  let cfg: TestConfig;
  let good: string;
  let bad: string;

  beforeAll(() => {
    script = ensureDebianTool('script', 'util-linux');
  }, INSTALL_TIMEOUT_MS);
  beforeEach(async () => {
    dir = tempDir();
    cfg = writeConfig(dir.path);
    good = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/t1', accessType: 'open' }, { doi: 'junk' }]);
    bad = writeDeposit(cfg.bucket, 'beta', [], { bytes: new Uint8Array([1, 2, 3]) });
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, good), join(cfg.bucket, bad)]);
  });
  afterEach(() => dir.remove());

  /** The program's stdout on a pseudo-terminal `columns` wide (the terminal's \r\n read as \n). */
  async function onTerminal(args: string[], columns = 100): Promise<string[]> {
    const command = [BUN, join(REPO, 'src/main.ts'), ...args].map((a) => `'${a}'`).join(' ');
    const proc = Bun.spawn([script, '-qec', `stty cols ${columns}; ${command}`, '/dev/null'], {
      cwd: REPO,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    return text.replaceAll('\r\n', '\n').split('\n');
  }

  test('--failures: a table on a terminal, as wide as it at most; JSON lines through a pipe or with --json', async () => {
    const lines = await onTerminal(['--failures', '--config', cfg.path], 70);
    expect(lines[0]).toMatch(/^kind +key +code +tries +lastModified +message$/);
    expect(lines[2]).toMatch(/^quarantined +beta\/.+ NOT_GZIP +1 +/);
    for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(70);
    const piped = await runCli(['--failures', '--config', cfg.path]);
    expect(JSON.parse(piped.lines[0]!)).toMatchObject({ kind: 'quarantined', key: bad, code: 'NOT_GZIP' });
    const json = await onTerminal(['--failures', '--json', '--config', cfg.path]);
    expect(JSON.parse(json[0]!)).toMatchObject({ kind: 'quarantined', key: bad });
  });

  test('--report: its fields, then its rejected lines as rows', async () => {
    const lines = await onTerminal(['--report', '--config', cfg.path, good]);
    expect(lines).toContain(`key                  ${good}`);
    expect(lines.some((l) => /^counts\.rejected +1$/.test(l))).toBe(true);
    expect(lines.some((l) => /^line +path +code +message$/.test(l))).toBe(true);
    expect(lines.some((l) => /^ +2 +\/doi +INVALID_DOI +/.test(l))).toBe(true);
    const piped = await runCli(['--report', '--config', cfg.path, good]);
    expect(JSON.parse(piped.lines[0]!)).toMatchObject({ key: good, outcome: 'applied' });
  });

  test('--stats: the figures, then a row per platform', async () => {
    const lines = await onTerminal(['--stats', '--env', 'production', '--config', cfg.path], 120);
    expect(lines.some((l) => /^ledger\.quarantined +1$/.test(l))).toBe(true);
    expect(lines.some((l) => /^platform +total +/.test(l))).toBe(true);
    expect(lines.some((l) => /^acme +1 +/.test(l))).toBe(true);
    const piped = await runCli(['--stats', '--env', 'production', '--config', cfg.path]);
    expect(JSON.parse(piped.lines[0]!)).toMatchObject({ env: 'production', ledger: { applied: 1, quarantined: 1 } });
  });

  test('--validate: rejected lines as a table; through a pipe its lines as before', async () => {
    const path = join(cfg.bucket, good);
    const lines = await onTerminal(['--validate', '--config', cfg.path, path]);
    expect(lines[0]).toBe(`${path}: 2 records, 1 valid DOI, 1 rejected line`);
    expect(lines[1]).toMatch(/^ {2}line +path +code +message$/);
    expect(lines[3]).toMatch(/^ {2} +2 +\/doi +INVALID_DOI +/);
    const piped = await runCli(['--validate', '--config', cfg.path, path]);
    expect(piped.lines[1]).toMatch(/^ {2}line 2 \/doi: INVALID_DOI: /);
  });

  test('--json goes with the listing commands only', async () => {
    const r = await runCli(['--dump', '--json', '--config', cfg.path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--json goes with --stats, --failures, --report, --validate');
  });
});
