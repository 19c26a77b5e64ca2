import { afterEach, beforeEach, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Store } from '../../src/store/index.ts';
import { BUN, REPO, type TestConfig, tempDir, waitFor, writeConfig, writeDeposit } from '../support/fixtures.ts';

/**
 * Logs survive a SIGKILL: a file's `file.applied` line is written to stderr before the next file starts, so a
 * killed daemon has logged every file it committed, except at most those of the transaction it was in.
 */

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;

beforeEach(() => {
  dir = tempDir();
  cfg = writeConfig(dir.path, '', { sortedPassFiles: 5 });
});
afterEach(() => dir.remove());

test('after each of three SIGKILLs during ingest, every committed file but those of the last transaction was logged', async () => {
  const logged = new Set<string>();
  const excused = new Set<number>();
  let seenSeq = 0;
  for (let kill = 0; kill < 3; kill++) {
    // a backlog of 30 files each time (more than ingest.sortedPassFiles): one sorted pass, its files committed in one transaction
    for (let f = kill * 30; f < (kill + 1) * 30; f++)
      writeDeposit(
        cfg.bucket,
        'acme',
        Array.from({ length: 1500 }, (_, i) => ({ doi: `10.5555/k${f}.${i}`, accessType: i % 2 ? 'open' : 'paid' })),
        { mtime: 1_700_000_000 + f },
      );
    const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--config', cfg.path], {
      cwd: REPO,
      stdout: 'ignore',
      stderr: 'pipe',
    });
    let log = '';
    const reading = (async () => {
      for await (const c of proc.stderr) log += new TextDecoder().decode(c);
    })();
    const before = logged.size;
    await waitFor(() => (log.match(/"event":"file\.applied"/g)?.length ?? 0) >= 3, 'three files applied', 30_000);
    proc.kill('SIGKILL');
    await proc.exited;
    await reading; // what the process wrote before it died is still in the pipe
    for (const line of log.split('\n')) {
      if (!line.includes('"event":"file.applied"')) continue;
      logged.add((JSON.parse(line) as { key: string }).key);
    }
    expect(logged.size).toBeGreaterThan(before);
    const store = Store.open(join(dir.path, 'db'), 'production', { mapSizeBytes: 1 << 30, readOnly: true });
    try {
      const applied = [...store.ledger()].filter((e) => e.outcome === 'applied').sort((a, b) => a.seq! - b.seq!);
      const missing = applied.filter((e) => !logged.has(e.key)).map((e) => e.seq!);
      // only the newest transaction's files may have gone unlogged: this run's sorted pass
      const newest = applied.filter((e) => e.seq! > seenSeq).map((e) => e.seq!);
      expect(newest.length).toBe(30);
      seenSeq = Math.max(seenSeq, ...newest);
      expect(missing.filter((s) => !newest.includes(s) && !excused.has(s))).toEqual([]);
      // a file of the killed transaction is not applied again by the next run (it is a duplicate): not logged then either
      for (const s of missing) excused.add(s);
      // and every logged file was committed
      expect([...logged].filter((k) => !applied.some((e) => e.key === k))).toEqual([]);
    } finally {
      await store.close();
    }
  }
}, 90_000);
