import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '../../src/store/index.ts';
import { runCli, type TestConfig, tempDir, writeConfig } from '../support/fixtures.ts';
import {
  between,
  type Child,
  Children,
  crashSettings,
  dumpHistory,
  firstDifference,
  generateDeposits,
  isEvent,
  ledgerProblems,
  placeFile,
  readLedger,
  seconds,
} from './crash-support.ts';

/**
 * Crash safety of a sorted pass (issue 48; docs/design.md, "A backlog in one sorted pass"; docs/reliability.md):
 * a first load of 30 files of 10,000 records is one sorted pass committed in chunks of 20,000 records. SIGKILL lands
 * after a seeded k-th `pass.chunk` line (+ 0-80 ms), again in the resumed pass, and so on; then the daemon runs
 * to the end. Between kills no file of the pass is in the ledger (the files land together at its end), and the pass
 * stands to be resumed. At the end `--dump --history` is byte-identical to `--ingest` of the same files one pass of
 * 4 at a time (another path), and the ledger holds every file once, numbered in apply order.
 */

const FILES = 30;
const RECORDS = 10_000;
const CHUNK_RECORDS = 20_000;
const s = crashSettings('crash-sorted-pass');
let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
const children = new Children();

beforeEach(() => {
  dir = tempDir('doi-holdings-crash-pass-');
  cfg = writeConfig(dir.path, '', { sortedPassFiles: 5, passChunkRecords: CHUNK_RECORDS });
});
afterEach(async () => {
  await children.killAll();
  dir.remove();
});

function daemon(): Child {
  return children.start(['--config', cfg.path]);
}

test(
  `SIGKILL in a sorted pass, ${s.kills} times at a seeded k-th pass.chunk line + 0-80 ms: the resumed pass ends with the dump and the ledger of a clean run`,
  async () => {
    const deposits = generateDeposits(s.rng, {
      files: FILES,
      records: RECORDS,
      platforms: ['acme', 'beta'],
      pool: 50_000,
    });
    for (const d of deposits) placeFile(cfg.bucket, d.key, d.bytes, d.mtimeMs);
    const order = deposits.map((d) => d.key);

    // the clean run: --ingest in apply order into another store, in passes of 4 files (no sorted pass)
    const cleanDir = join(dir.path, 'clean');
    mkdirSync(cleanDir);
    const clean = writeConfig(cleanDir);
    const cleanRun = await runCli(['--ingest', ...order.map((k) => join(cfg.bucket, k)), '--config', clean.path]);
    expect(cleanRun.lines.map((l) => JSON.parse(l).outcome)).toEqual(order.map(() => 'applied'));
    const cleanDump = await dumpHistory(clean.path);

    const store = join(dir.path, 'db');
    let lastApplied = 0;
    for (let kill = 0; kill < s.kills; kill++) {
      const t = performance.now();
      const k = between(s.rng, 1, 3);
      const delay = between(s.rng, 0, 80);
      // a kill must land inside the pass: k more chunks, and room for a few more while the delay runs (a chunk of
      // 20,000 records takes tens of ms here), else the pass may have ended when the kill lands
      if (lastApplied + (k + 4) * CHUNK_RECORDS >= FILES * RECORDS) break;
      const d = daemon();
      const line = await d.nth(isEvent('pass.chunk'), k, 60_000);
      await Bun.sleep(delay);
      const alive = !d.exited;
      await d.kill();
      expect(alive).toBe(true);
      const applied = (JSON.parse(line) as { applied: number }).applied;
      expect(applied).toBeGreaterThan(lastApplied); // each run went on from where the last one stopped
      lastApplied = applied;
      expect(d.lines.filter(isEvent('file.applied'))).toEqual([]);
      // the pass stands to be resumed; none of its files is in the ledger yet
      expect((await readLedger(store)).entries).toEqual([]);
      const s2 = Store.open(store, 'production', { mapSizeBytes: 1 << 30, readOnly: true });
      try {
        expect(s2.standingPass()).toBe('abandoned');
        expect(readdirSync(join(s2.path, 'sorted-pass'))).toHaveLength(1); // its runs are kept for the resume
      } finally {
        await s2.close();
      }
      s.say(
        `kill ${kill + 1}/${s.kills}: k=${k}, delay=${delay} ms, ${applied.toLocaleString('en')} of ${(FILES * RECORDS).toLocaleString('en')} records committed (${seconds(performance.now() - t)})`,
      );
    }
    const d = daemon();
    const lines = await d.nth(isEvent('file.applied'), FILES, 60_000).then(() => d.lines);
    expect(await d.stop()).toBe(0);
    expect(lines.filter(isEvent('pass.resumed'))).toHaveLength(1);
    expect(ledgerProblems(await readLedger(store), order)).toEqual([]);
    expect(firstDifference(await dumpHistory(cfg.path), cleanDump)).toBeUndefined();
    expect(readdirSync(join(store, 'production', 'sorted-pass'))).toEqual([]);
  },
  120_000 + s.kills * 15_000,
);
