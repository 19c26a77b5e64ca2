import { afterEach, beforeEach, expect, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, TEST_INGEST, type TestConfig, tempDir, writeConfig } from '../support/fixtures.ts';
import {
  between,
  type Child,
  Children,
  crashSettings,
  type Deposit,
  dumpHistory,
  firstDifference,
  generateDeposits,
  isEvent,
  ledgerProblems,
  opsTotal,
  placeFile,
  readLedger,
  seconds,
} from './crash-support.ts';

/**
 * Crash safety of ingestion, timed from the inside (issue 20, item 1; docs/reliability.md): SIGKILL lands while
 * the daemon is really applying files. 60 deposit files of 10,000 records (adds, updates, removals, re-adds of
 * DOIs shared by two platforms) are in the bucket; the daemon starts, the test waits for its k-th `file.applied`
 * line (k seeded, over the files still to apply), waits 0-80 ms more, kills it, checks the store, restarts it,
 * and so on. Then it lets the daemon finish: `--dump --history` must be byte-identical to a clean run's, and every
 * file must be in the ledger once, applied, numbered in (LastModified, key) order.
 *
 * The clean run is `--ingest` of the same files, given in (LastModified, key) order, into another store. It is
 * equivalent to an unkilled daemon: both go through the same Ingestor and Store.applyFiles; what a dump shows
 * depends only on the files' bytes, their LastModified (history times, `updated`) and the apply order (event
 * order, sequence numbers; a history names files by key), never on batch boundaries, the parse thread or the
 * wall clock (docs/design.md, "Apply order and replica convergence"). Measured once while writing this test: an
 * unkilled daemon's dump and `--ingest`'s are the same 78 MB. `--ingest` is chosen because it takes another
 * path to the same result (one file per transaction, parsing on the main thread), so a fault that only the
 * daemon's batching or worker makes would show as a difference rather than be copied into the reference.
 */

const FILES = 60;
const RECORDS = 10_000;
/** a kill is only aimed where at least this many files are still to come after the k-th applied one */
const AFTER_K = 4;
/** kills per round at most; a round that runs out of files finishes, is checked, and the next starts afresh */
const KILLS_PER_ROUND = 8;

const s = crashSettings('crash-ingest');
let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
const children = new Children();

beforeEach(() => {
  dir = tempDir('doi-holdings-crash-ingest-');
  cfg = writeConfig(dir.path);
});
afterEach(async () => {
  await children.killAll();
  dir.remove();
});

function daemon(): Child {
  return children.start(['--config', cfg.path]);
}

const keyOf = (line: string) => (JSON.parse(line) as { key: string }).key;

test(
  `SIGKILL during ingest, ${s.kills} times at a seeded k-th file.applied line + 0-80 ms: the dump and the ledger equal a clean run's`,
  async () => {
    const t0 = performance.now();
    const deposits: Deposit[] = generateDeposits(s.rng, {
      files: FILES,
      records: RECORDS,
      platforms: ['acme', 'beta'],
      pool: 50_000,
    });
    for (const d of deposits) placeFile(cfg.bucket, d.key, d.bytes, d.mtimeMs);
    const order = deposits.map((d) => d.key); // generated in (LastModified, key) order
    const sorted = [...deposits].sort((a, b) => a.mtimeMs - b.mtimeMs || (a.key < b.key ? -1 : 1)).map((d) => d.key);
    expect(sorted).toEqual(order);
    s.say(
      `${FILES} files of ${RECORDS} lines, ${JSON.stringify(opsTotal(deposits))}, made in ${seconds(performance.now() - t0)}`,
    );

    // the clean run: --ingest in apply order into another store dir (the bucket is only read)
    let t = performance.now();
    const cleanCfg = join(dir.path, 'clean.toml');
    writeFileSync(cleanCfg, readFileSync(cfg.path, 'utf8').replace('dir = "db"', 'dir = "clean-db"'));
    const clean = await runCli(['--ingest', ...order.map((k) => join(cfg.bucket, k)), '--config', cleanCfg]);
    expect(clean.code).toBe(1); // 1: the rejected lines are reported; every file is still applied
    expect(clean.lines.map((l) => JSON.parse(l).outcome)).toEqual(order.map(() => 'applied'));
    expect(ledgerProblems(await readLedger(join(dir.path, 'clean-db')), order)).toEqual([]);
    const cleanDump = await dumpHistory(cleanCfg);
    expect(cleanDump.split('\n').length).toBeGreaterThan(50_000);
    s.say(
      `clean run (--ingest) and its dump: ${seconds(performance.now() - t)}, ${cleanDump.length.toLocaleString('en')} bytes`,
    );

    const store = join(dir.path, 'db');
    let killsLeft = s.kills;
    let round = 0;
    const finishRound = async (logged: Set<string>) => {
      // restart, let it apply the rest untouched, stop it, compare with the clean run
      const tf = performance.now();
      const before = (await readLedger(store)).entries.length;
      const d = daemon();
      if (before < FILES) await d.nth(isEvent('file.applied'), FILES - before);
      // started before it is stopped: with nothing left to apply, a stop at once could come before the process
      // catches signals (its first line) and end it by the signal's default action (exit 143)
      await d.nth(isEvent('daemon.started'), 1);
      expect(await d.stop()).toBe(0);
      for (const l of d.lines.filter(isEvent('file.applied'))) {
        expect(logged.has(keyOf(l))).toBe(false);
        logged.add(keyOf(l));
      }
      expect(ledgerProblems(await readLedger(store), order)).toEqual([]);
      const diff = firstDifference(await dumpHistory(cfg.path), cleanDump);
      expect(diff).toBeUndefined();
      s.say(
        `round ${round}: the last run applied ${FILES - before} files; dump byte-identical to the clean run, ledger whole (${seconds(performance.now() - tf)})`,
      );
    };

    while (killsLeft > 0) {
      round++;
      rmSync(store, { recursive: true, force: true }); // each round starts from an empty store
      const planned = Math.min(killsLeft, KILLS_PER_ROUND);
      /** every key a daemon of this round logged as applied: none twice */
      const logged = new Set<string>();
      let applied = 0;
      for (let j = 0; j < planned; j++) {
        const left = FILES - applied;
        if (left < AFTER_K + 1) break; // too few files left to land a kill mid-ingest: the next round takes the rest
        const k = between(s.rng, 1, Math.max(1, Math.floor((left - AFTER_K) / (planned - j))));
        const delay = between(s.rng, 0, 80);
        t = performance.now();
        const d = daemon();
        await d.nth(isEvent('file.applied'), k, 60_000);
        await Bun.sleep(delay);
        const alive = !d.exited;
        await d.kill();
        killsLeft--;
        expect(alive).toBe(true);
        const lines = d.lines.filter(isEvent('file.applied'));
        for (const l of lines) {
          expect(logged.has(keyOf(l))).toBe(false); // a file applied twice is logged twice
          logged.add(keyOf(l));
        }
        const ledger = await readLedger(store);
        const now = ledger.entries.length;
        // the store after a crash: exactly the first `now` files in apply order, each applied once, numbered 1..now
        expect(ledgerProblems(ledger, order.slice(0, now))).toEqual([]);
        // the kill landed mid-ingest: files were still to apply
        expect(now).toBeLessThan(FILES);
        expect(now).toBeGreaterThanOrEqual(applied + k);
        // every logged file is committed; a committed file not logged can only be of the killed transaction (a pass:
        // up to the test config's passFiles files)
        expect([...logged].filter((key) => !order.slice(0, now).includes(key))).toEqual([]);
        const unlogged = order.slice(0, now).filter((key) => !logged.has(key));
        expect(unlogged.filter((key) => order.indexOf(key) < now - TEST_INGEST.passFiles)).toEqual([]);
        for (const key of unlogged) logged.add(key); // the next run finds them applied and does not log them
        s.say(
          `round ${round} kill ${s.kills - killsLeft}/${s.kills}: ${left} files left, k=${k}, delay=${delay} ms -> ${now - applied} applied by this run (${now}/${FILES}), ${seconds(performance.now() - t)}`,
        );
        applied = now;
      }
      await finishRound(logged);
    }
    s.say(`done in ${seconds(performance.now() - t0)}`);
  },
  90_000 + s.kills * 12_000,
);
