import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { dump, runCli, seeded, type TestConfig, tempDir, writeConfig, writeDeposit } from '../support/fixtures.ts';

/**
 * `--ingest` of many files applies them in passes of `ingest.passFiles` (4 in the test config), in the order
 * given, and says of each file what `--ingest` of that file alone says: the same lines in the same order, and the
 * same store (`--dump --history`, `--failures`, `--report`) as one `--ingest` per file.
 */

let dir: ReturnType<typeof tempDir>;
let passes: TestConfig;
let sorted: TestConfig;
let alone: TestConfig;

beforeEach(() => {
  dir = tempDir();
  for (const name of ['passes', 'sorted', 'alone']) mkdirSync(join(dir.path, name));
  passes = writeConfig(join(dir.path, 'passes'));
  // a backlog of 5 files or more is one sorted pass (docs/design.md), committed in chunks of 1,000 records
  sorted = writeConfig(join(dir.path, 'sorted'), '', { sortedPassFiles: 5, passChunkRecords: 1000 });
  alone = writeConfig(join(dir.path, 'alone'));
});
afterEach(() => dir.remove());

/** What the operator sees of a store: every holding with its history, the failures and the ledger's reports. */
async function storeSeen(cfg: TestConfig) {
  const report = await runCli(['--report', '--config', cfg.path]);
  const failures = await runCli(['--failures', '--config', cfg.path]);
  const without = (line: string) => line.replace(/"(recordedAt|applyMs|readMs|parseMs)":[^,}]*/g, '"$1":0');
  const stats = await runCli(['--stats', '--config', cfg.path]);
  return {
    history: await dump(cfg.path, ['--history']),
    report: report.lines.map(without),
    failures: failures.lines.map(without),
    stats: stats.lines.map(withoutStoreFigures),
  };
}

/** --stats without the figures of the store file itself (its pages depend on how it was written, not what it holds). */
function withoutStoreFigures(line: string): unknown {
  const v = JSON.parse(line) as Record<string, unknown>;
  return { ...v, store: undefined };
}

test.each([
  ['in passes', () => passes],
  ['as one sorted pass', () => sorted],
])(
  'many files %s, given out of LastModified order, with faults among them: the lines and the store of one --ingest per file',
  async (_, cfgOf) => {
    const rand = seeded(3);
    const outbox = join(dir.path, 'outbox');
    const doi = () => `10.5555/P.${Math.floor(rand() * 30)}`;
    const files: string[] = [];
    for (let i = 0; i < 14; i++) {
      const lines = Array.from({ length: 1 + Math.floor(rand() * 12) }, () =>
        rand() < 0.2
          ? { doi: doi(), deleted: true }
          : rand() < 0.1
            ? { doi: 'not a doi' }
            : { doi: rand() < 0.3 ? doi().toLowerCase() : doi(), accessType: rand() < 0.5 ? 'open' : 'paid' },
      );
      // LastModified runs backwards: the order given is not the apply order the daemon would take
      files.push(join(outbox, writeDeposit(outbox, rand() < 0.5 ? 'acme' : 'beta', lines, { mtime: 2_000_000 - i })));
    }
    files.splice(5, 0, join(outbox, writeDeposit(outbox, 'acme', ['{"doi": broken'])));
    files.splice(8, 0, join(outbox, 'acme/00000000-0000-4000-8000-00000000dead.jsonl.gz')); // missing
    files.splice(10, 0, files[2]!); // the same file again: a duplicate
    files.push(join(outbox, writeDeposit(outbox, 'nobody', [{ doi: '10.5555/x' }]))); // an unknown platform

    // a file of a key given before, with other content: a same-name conflict
    const [reused, first] = [join(dir.path, 'reused'), files[0]!.slice(outbox.length + 1)];
    const [platform, name] = first.split('/') as [string, string];
    files.splice(
      12,
      0,
      join(reused, writeDeposit(reused, platform, [{ doi: '10.5555/P.1', accessType: 'open' }], { mtime: 1, name })),
    );
    const many = await runCli(['--ingest', '--config', cfgOf().path, ...files]);
    const one = [];
    for (const f of files) one.push(await runCli(['--ingest', '--config', alone.path, f]));
    expect(many.lines).toEqual(one.flatMap((r) => r.lines));
    expect(many.code).toBe(1); // input faults found
    expect(many.lines.map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toContain('duplicate');
    expect(many.lines.map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toContain('conflict');
    expect(await storeSeen(cfgOf())).toEqual(await storeSeen(alone));
  },
  30_000,
);
