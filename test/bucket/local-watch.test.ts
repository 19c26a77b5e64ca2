import { afterEach, expect, test } from 'bun:test';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/base/log.ts';
import { type FileStat, FolderWatch, missedFiles, statBucketFile } from '../../src/bucket/index.ts';
import { tempDir, waitFor } from '../support/fixtures.ts';

const dirs: ReturnType<typeof tempDir>[] = [];
const watches: FolderWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
  for (const d of dirs.splice(0)) d.remove();
});

function bucket(): string {
  const d = tempDir('doi-holdings-watch-');
  dirs.push(d);
  return d.path;
}

/** A live watch whose "ingestor" takes every key it is handed, unless `refuse` says not this time. */
async function watching(root: string, opts: { rescanMs?: number; refuse?: (key: string) => boolean } = {}) {
  const taken = new Set<string>();
  const handed: string[] = [];
  const asked = { n: 0 };
  const watch = new FolderWatch({
    root,
    settleMs: 100,
    log: silentLogger,
    envName: 'production',
    rescanMs: opts.rescanMs ?? 0,
    holds: (key) => (asked.n++, taken.has(key)),
    onFiles: (keys) => {
      for (const k of keys) {
        handed.push(k);
        if (!opts.refuse?.(k)) taken.add(k);
      }
    },
  });
  watches.push(watch);
  await watch.start();
  return { watch, taken, handed, asked };
}

test('files written back to back into a folder just created are all handed on (8 new folders)', async () => {
  const root = bucket();
  const { taken } = await watching(root);
  const want: string[] = [];
  for (let i = 0; i < 8; i++) {
    mkdirSync(join(root, `p${i}`));
    writeFileSync(join(root, `p${i}`, 'a.jsonl.gz'), 'a');
    await Bun.sleep(1);
    writeFileSync(join(root, `p${i}`, 'b.jsonl.gz'), 'b');
    want.push(`p${i}/a.jsonl.gz`, `p${i}/b.jsonl.gz`);
  }
  await waitFor(() => want.every((k) => taken.has(k)), 'every file handed on', 5_000);
});

test('files in nested folders created at once are handed on, each once the watch has it', async () => {
  const root = bucket();
  const { taken } = await watching(root);
  mkdirSync(join(root, 'acme', '2026', '11'), { recursive: true });
  const want = ['acme/2026/11/a.jsonl.gz', 'acme/2026/11/b.jsonl.gz', 'acme/2026/c.jsonl.gz'];
  for (const k of want) writeFileSync(join(root, k), k);
  await waitFor(() => want.every((k) => taken.has(k)), 'the nested files handed on', 5_000);
});

test('a file handed on but not taken is handed on again by the next rescan, and a taken one is not', async () => {
  const root = bucket();
  let refusals = 0;
  const { taken, handed } = await watching(root, {
    rescanMs: 150,
    refuse: (k) => k === 'acme/x.jsonl.gz' && refusals++ === 0,
  });
  mkdirSync(join(root, 'acme'));
  await Bun.sleep(400); // the folder is the watch's before its files come: the watch's own event is the first hand-on
  writeFileSync(join(root, 'acme', 'x.jsonl.gz'), 'x');
  writeFileSync(join(root, 'acme', 'y.jsonl.gz'), 'y');
  await waitFor(() => taken.has('acme/x.jsonl.gz') && taken.has('acme/y.jsonl.gz'), 'both taken', 5_000);
  const before = handed.length;
  await Bun.sleep(600); // several rescans (150 ms apart): a taken file handed on by each would show 4 times
  // the watch's own event for a file may still come after a rescan handed it on (by design: the ingestor ignores a
  // key it holds), so a late event may add one hand-on of each; no rescan adds any
  const after = handed.slice(before);
  expect(after.filter((k) => k === 'acme/x.jsonl.gz').length).toBeLessThanOrEqual(1);
  expect(after.filter((k) => k === 'acme/y.jsonl.gz').length).toBeLessThanOrEqual(1);
  // x: refused the first time, then handed on again (by the next rescan or its event) and taken
  expect(handed.filter((k) => k === 'acme/x.jsonl.gz').length).toBeGreaterThanOrEqual(2);
  expect(handed.filter((k) => k === 'acme/x.jsonl.gz').length).toBeLessThanOrEqual(3);
  expect(handed.filter((k) => k === 'acme/y.jsonl.gz').length).toBeLessThanOrEqual(2);
});

test('a closed watch lists nothing and asks the ingestor nothing: its timers are gone, a listing under way ends first', async () => {
  const root = bucket();
  for (let i = 0; i < 600; i++) writeFileSync(join(root, `f${i}.jsonl.gz`), 'x');
  const { watch, handed, asked } = await watching(root, { rescanMs: 100 });
  handed.length = 0;
  mkdirSync(join(root, 'acme')); // a new folder's listing, due 250 ms later
  await waitFor(() => asked.n > 0, 'a rescan under way');
  await watch.close(); // waits for the listing under way
  const after = asked.n;
  writeFileSync(join(root, 'acme', 'late.jsonl.gz'), 'x');
  await Bun.sleep(500); // five rescan periods, and the new folder's due time
  expect(asked.n).toBe(after);
  expect(await watch.rescan()).toEqual([]);
  expect(handed.filter((k) => k.startsWith('acme/'))).toEqual([]);
});

test('missedFiles: only settled files the ingestor does not hold, below `under`, hidden and temp names left out', async () => {
  const root = bucket();
  mkdirSync(join(root, 'acme'));
  mkdirSync(join(root, 'beta'));
  for (const k of [
    'acme/new.jsonl.gz',
    'acme/held.jsonl.gz',
    'acme/.hidden.jsonl.gz',
    'acme/part.jsonl.gz.partial',
    'acme/edit.jsonl.gz~',
    'beta/other.jsonl.gz',
  ])
    writeFileSync(join(root, k), k);
  const held = new Map<string, FileStat>([['acme/held.jsonl.gz', await statBucketFile(root, 'acme/held.jsonl.gz')]]);
  const holds = (key: string, stat: FileStat | undefined) =>
    stat !== undefined && held.get(key)?.size === stat.size && held.get(key)?.lastModified === stat.lastModified;
  expect((await missedFiles(root, { settleMs: 20, holds })).sort()).toEqual([
    'acme/new.jsonl.gz',
    'beta/other.jsonl.gz',
  ]);
  expect(await missedFiles(root, { settleMs: 20, holds, under: 'acme' })).toEqual(['acme/new.jsonl.gz']);
  // the held file, rewritten: a new version the ingestor does not hold
  writeFileSync(join(root, 'acme/held.jsonl.gz'), 'a longer content');
  expect(await missedFiles(root, { settleMs: 20, holds, under: 'acme' })).toContain('acme/held.jsonl.gz');
  expect(await missedFiles(root, { settleMs: 20, holds, under: 'gone' })).toEqual([]);
});

test('missedFiles: a file still being written is left alone until its size holds for settleMs', async () => {
  const root = bucket();
  const path = join(root, 'growing.jsonl.gz');
  writeFileSync(path, 'x');
  let writing = true;
  const writer = (async () => {
    while (writing) {
      appendFileSync(path, 'more');
      await Bun.sleep(20);
    }
  })();
  const during = await missedFiles(root, { settleMs: 150, holds: () => false });
  writing = false;
  await writer;
  expect(during).toEqual([]);
  expect(await missedFiles(root, { settleMs: 150, holds: () => false })).toEqual(['growing.jsonl.gz']);
});

test('missedFiles: a file removed during the settle wait is not handed on', async () => {
  const root = bucket();
  writeFileSync(join(root, 'brief.jsonl.gz'), 'x');
  const found = missedFiles(root, { settleMs: 200, holds: () => false });
  await Bun.sleep(50);
  rmSync(join(root, 'brief.jsonl.gz'));
  expect(await found).toEqual([]);
});

test('a file the watch could not hand on is logged with its key', async () => {
  const root = bucket();
  mkdirSync(join(root, 'acme')); // the watch's own event, not a new folder's listing
  const lines: Record<string, unknown>[] = [];
  const watch = new FolderWatch({
    root,
    settleMs: 50,
    log: { log: (level, event, fields) => lines.push({ level, event, ...fields }) },
    envName: 'staging',
    rescanMs: 0,
    holds: () => false,
    // async, as the ingestor's submit is
    onFiles: async (keys) => {
      if (keys.length > 0) throw new Error('ingestor closed');
    },
  });
  watches.push(watch);
  await watch.start();
  writeFileSync(join(root, 'acme', 'a.jsonl.gz'), 'a');
  const failed = await waitFor(
    () => lines.find((l) => l.event === 'watch.handler_failed'),
    'watch.handler_failed',
    5_000,
  );
  expect(failed).toEqual({
    level: 'error',
    event: 'watch.handler_failed',
    env: 'staging',
    key: 'acme/a.jsonl.gz',
    error: 'Error: ingestor closed',
  });
});
