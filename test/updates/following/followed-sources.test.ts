import { expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../src/base/log.ts';
import { Store } from '../../../src/store/index.ts';
import { FollowedSources } from '../../../src/updates/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { SAMPLE } from '../../support/rw-sample.ts';

/**
 * The update sources the daemon follows, on their own: what their log says when an import fails unexpectedly, and
 * that a run slower than its interval is not queued again behind itself.
 */

test('an import that fails other than by a fault of its source is logged with the source it was for', async () => {
  const dir = tempDir('doi-holdings-followed-');
  const lines: Record<string, unknown>[] = [];
  const log: Logger = { log: (level, event, fields) => lines.push({ level, event, ...fields }) };
  // a store that cannot be read: the failure is the service's, not the file's (no fault code, no child process)
  const broken = {
    env: 'production',
    sourceState: () => {
      throw new Error('store read failed');
    },
  } as unknown as Store;
  const dropped = join(dir.path, 'rw.csv');
  writeFileSync(dropped, 'Record ID,Title\n');
  const sources = new FollowedSources({ dropDir: dir.path, nice: 10, urls: [], stores: [broken], log });
  try {
    await sources.start();
    const failed = await waitFor(() => lines.find((l) => l.event === 'updates.import_failed'), 'updates.import_failed');
    expect(failed).toEqual({
      level: 'error',
      event: 'updates.import_failed',
      source: dropped,
      error: 'Error: store read failed',
    });
  } finally {
    await sources.close();
    dir.remove();
  }
});

test('a URL whose run outlasts its interval has one run pending at most: ticks meanwhile are skipped, the next one after it runs it', async () => {
  const dir = tempDir('doi-holdings-followed-');
  const stores = [Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 })];
  const lines: Record<string, unknown>[] = [];
  const log: Logger = { log: (level, event, fields) => lines.push({ level, event, ...fields }) };
  // /slow answers its first fetch only when let go; both answer a fetch with the validator they gave 304
  let letGo!: () => void;
  const held = new Promise<void>((r) => (letGo = r));
  const fetched: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      fetched.push(path);
      if (req.headers.get('if-none-match') === '"v1"') return new Response(null, { status: 304 });
      if (path === '/slow') await held;
      return new Response(SAMPLE, { headers: { etag: '"v1"', 'content-type': 'text/csv' } });
    },
  });
  const url = (path: string) => ({
    url: `http://127.0.0.1:${server.port}${path}`,
    format: 'retraction-watch-csv' as const,
    everyMs: 60_000,
    staleAfterMs: 3600_000,
  });
  const ticks: (() => void)[] = [];
  const sources = new FollowedSources({
    nice: 0,
    urls: [url('/slow'), url('/queued')],
    stores,
    log,
    schedule: (tick) => (ticks.push(tick), () => undefined),
  });
  const tickAll = () => ticks.forEach((tick) => tick());
  try {
    await sources.start();
    await waitFor(() => fetched.length === 1, 'the held fetch');
    // /slow is running, /queued waits behind it: ten intervals pass for each
    for (let i = 0; i < 10; i++) tickAll();
    const drained = sources.idle();
    letGo();
    await drained;
    expect(fetched).toEqual(['/slow', '/queued']);
    expect(lines.filter((l) => l.event === 'updates.run_skipped').map((l) => l.source)).toEqual(
      Array.from({ length: 10 }, () => [url('/slow').url, url('/queued').url]).flat(),
    );
    expect(lines.filter((l) => l.event === 'updates.imported')).toHaveLength(2);
    // ended: the next tick queues each again, as usual
    tickAll();
    await sources.idle();
    expect(fetched).toEqual(['/slow', '/queued', '/slow', '/queued']);
    expect(lines.filter((l) => l.event === 'updates.not_modified')).toHaveLength(2);
  } finally {
    letGo();
    await sources.close();
    await server.stop(true);
    for (const s of stores) await s.close();
    dir.remove();
  }
});

test("a restart keeps a URL source's last success, so a source stale before the restart is stale after it", async () => {
  const dir = tempDir('doi-holdings-followed-');
  const lines: Record<string, unknown>[] = [];
  const log: Logger = { log: (level, event, fields) => lines.push({ level, event, ...fields }) };
  // the source answers the first run; from the restart on it fails, once let go
  let up = true;
  let letGo!: () => void;
  const held = new Promise<void>((r) => (letGo = r));
  let fetches = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch() {
      fetches++;
      if (up) return new Response(SAMPLE, { headers: { etag: '"v1"', 'content-type': 'text/csv' } });
      await held;
      return new Response('down', { status: 503 });
    },
  });
  const staleAfterMs = 3600_000;
  const source = {
    url: `http://127.0.0.1:${server.port}/rw.csv`,
    format: 'retraction-watch-csv' as const,
    everyMs: 60_000,
    staleAfterMs,
  };
  // runs at start only: the ticks after it are never called
  const follow = (stores: Store[], startedAt?: number) =>
    new FollowedSources({ nice: 0, urls: [source], stores, log, startedAt, schedule: () => () => undefined });
  const open = () => [Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 })];
  try {
    let stores = open();
    const first = follow(stores);
    await first.start();
    await first.idle();
    expect(lines.filter((l) => l.event === 'updates.imported')).toHaveLength(1);
    const succeededAt = first.status.get(source.url)!.lastSuccessAt;
    expect(succeededAt).toBeGreaterThan(0);
    await first.close();
    for (const s of stores) await s.close();

    // the daemon started again on the same store, half a stale period after that success; its run at start fails
    up = false;
    stores = open();
    const restartedAt = succeededAt + staleAfterMs / 2;
    const second = follow(stores, restartedAt);
    // what /healthz says of the source a stale period after its success (only half of one after the restart)
    const expectStaleFromSuccess = () => {
      // still fresh up to a stale period after the success
      expect(second.freshness(succeededAt + staleAfterMs).checks[source.url]).toMatchObject({ state: 'ok' });
      const later = second.freshness(succeededAt + staleAfterMs + 1);
      expect(later.checks[source.url]).toMatchObject({
        state: 'stale',
        lastSuccessAt: new Date(succeededAt).toISOString(),
      });
      expect(later.warnings).toEqual([
        `update source ${source.url} is stale: last success 1.0 h ago (stale after 1.0 h)`,
      ]);
    };
    try {
      await second.start();
      // while its run at start waits for the source: what it knows came from the store alone
      await waitFor(() => fetches === 2, 'the run at start asking the source');
      expect(second.status.get(source.url)).toMatchObject({ lastSuccessAt: succeededAt, lastFailureAt: 0 });
      expectStaleFromSuccess();
      // and once that run has failed
      letGo();
      await second.idle();
      expect(lines.filter((l) => l.event === 'updates.source_failed')).toHaveLength(1);
      expect(second.status.get(source.url)).toMatchObject({ lastSuccessAt: succeededAt });
      expect(second.status.get(source.url)!.lastFailureAt).toBeGreaterThan(0);
      expectStaleFromSuccess();
    } finally {
      letGo();
      await second.close();
    }
    for (const s of stores) await s.close();
  } finally {
    await server.stop(true);
    dir.remove();
  }
});
