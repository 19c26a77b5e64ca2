import { afterEach, beforeEach, expect, test } from 'bun:test';
import { join } from 'node:path';
import { PreparerPool, WorkerPreparer } from '../../src/ingest/file-preparer.ts';
import { BUN, REPO, tempDir, waitFor, writeDeposit } from '../support/fixtures.ts';

/** The prepare worker: files come back read, parsed and encoded; a worker that dies does not stall ingestion. */

let dir: ReturnType<typeof tempDir>;
beforeEach(() => (dir = tempDir()));
afterEach(() => dir.remove());

const input = (key: string) => ({ root: dir.path, key, platforms: ['acme'], maxDecompressedBytes: 1 << 20, tries: 1 });

test('the worker reads, parses and encodes a deposit; a bad line and a missing file are reported', async () => {
  const preparer = new WorkerPreparer();
  try {
    const key = writeDeposit(dir.path, 'acme', [
      { doi: '10.5555/B' },
      'not json',
      { doi: '10.5555/a', accessType: 'open' },
    ]);
    const reply = await preparer.prepare(input(key));
    expect(reply.kind).toBe('prepared');
    if (reply.kind !== 'prepared') return;
    expect(reply.file.key).toBe(key);
    expect(reply.prepared.encoded!.count).toBe(2);
    expect(reply.prepared.parsed.recordLines).toBe(3);
    expect(reply.prepared.parsed.rejected.map((r) => [r.line, r.code])).toEqual([[2, 'INVALID_JSON']]);
    const missing = await preparer.prepare(input('acme/00000000-0000-4000-8000-00000000ffff.jsonl.gz'));
    expect(missing).toMatchObject({ kind: 'readError', fault: { code: 'FILE_MISSING' } });
  } finally {
    preparer.close();
  }
});

test('a worker that cannot start is reported and its files are prepared on the calling thread', async () => {
  const failures: string[] = [];
  const preparer = new WorkerPreparer((m) => failures.push(m), join(dir.path, 'no-such-worker.ts'));
  try {
    const key = writeDeposit(dir.path, 'acme', [{ doi: '10.5555/c' }]);
    const reply = await preparer.prepare(input(key));
    expect(reply.kind).toBe('prepared');
    await waitFor(() => failures.length > 0, 'the failure reported');
    expect(failures[0]).toContain('no-such-worker');
    // and later files go straight to the fallback
    expect((await preparer.prepare(input(key))).kind).toBe('prepared');
  } finally {
    preparer.close();
  }
});

test('a pool of workers: files asked side by side come back each with its own records, spread over the workers started as a backlog needs them', async () => {
  const made: WorkerPreparer[] = [];
  const pool = new PreparerPool(3, () => {
    const w = new WorkerPreparer();
    made.push(w);
    return w;
  });
  try {
    const keys = Array.from({ length: 12 }, (_, i) =>
      writeDeposit(
        dir.path,
        'acme',
        Array.from({ length: i + 1 }, (_, j) => ({ doi: `10.5555/f${i}.${j}` })),
      ),
    );
    const one = await pool.prepare(input(keys[0]!)); // a file alone: the first worker, no other started
    expect(one.kind).toBe('prepared');
    expect(made).toHaveLength(1);
    const replies = keys.map((k) => pool.prepare(input(k)));
    // a backlog: the first worker takes 2, then each file goes to the one with the fewest waiting, started as needed
    expect(made.map((w) => w.inFlight)).toEqual([4, 4, 4]);
    const got = await Promise.all(replies);
    got.forEach((r, i) => {
      expect(r.kind).toBe('prepared');
      if (r.kind !== 'prepared') return;
      expect(r.file.key).toBe(keys[i]!);
      expect(r.prepared.encoded!.count).toBe(i + 1);
    });
    expect(made.map((w) => w.inFlight)).toEqual([0, 0, 0]);
  } finally {
    pool.close();
  }
});

test("the worker's modules load no native library (a worker ended while it loads one can bring the process down)", () => {
  // seen: a daemon stopped right after its start exited 134 (a NAPI fatal error in lmdb-js's loader), its parse
  // worker ended while that worker still loaded lmdb-js. The parse worker needs no LMDB; the store's face loads it.
  const nativeLibraries = (module: string): number => {
    const script = `await import(${JSON.stringify(module)});
      const maps = require('node:fs').readFileSync('/proc/self/maps', 'utf8');
      console.log(maps.split('\\n').filter((l) => l.endsWith('.node')).length);
      process.exit(0);`;
    const run = Bun.spawnSync([BUN, '--eval', script], { cwd: REPO });
    if (run.exitCode !== 0) throw new Error(`importing ${module} failed: ${run.stderr.toString()}`);
    return Number(run.stdout.toString().trim());
  };
  expect(nativeLibraries(join(REPO, 'src/ingest/prepare-worker.ts'))).toBe(0);
  // the measure itself sees a native library when one is loaded
  expect(nativeLibraries(join(REPO, 'src/store/index.ts'))).toBeGreaterThan(0);
});
