import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, tempDir, waitFor, writeConfig } from '../support/fixtures.ts';
import { type Daemon, daemonUrl, logLines, updatesOf } from '../support/harvest-support.ts';
import { csv, FRANKEN_DOI, ROWS, row, SAMPLE } from '../support/rw-sample.ts';

/**
 * Two daemon processes fed the same update files (one drop folder both follow) hand out interchangeable change-feed
 * cursors: a client alternating between them, page by page, ends with exactly what the Updates API gives
 * (docs/design.md, "Change feed").
 */

const KEY = 'test-key-123';
let dir: ReturnType<typeof tempDir>;
let drop: string;
let replicas: Daemon[] = [];
let urls: string[] = [];

function imported(d: Daemon): number {
  return logLines(d).filter((l) => l.event === 'updates.imported').length;
}

/** Drops an update file into the shared folder and waits until both daemons have imported it. */
async function dropFile(name: string, text: string): Promise<void> {
  const before = replicas.map(imported);
  // written aside, then renamed into place whole
  writeFileSync(join(drop, `.${name}.partial`), text);
  renameSync(join(drop, `.${name}.partial`), join(drop, name));
  await waitFor(() => replicas.every((d, i) => imported(d) > before[i]!), `both daemons importing ${name}`, 30_000);
}

/**
 * Each replica's Updates API gives every work of `state` its list, and no other work has updates there. Their read
 * indexes look for new imports every 250 ms, as they are asked: it is waited for, then asserted.
 */
async function expectApiAgrees(state: Map<string, unknown[]>): Promise<void> {
  const want = Object.fromEntries(state);
  await waitFor(async () => {
    for (const base of urls) {
      if (!Bun.deepEquals(await updatesOf(base, [...state.keys()]), want)) return false;
      const metrics = await (await fetch(`${base}/metrics`)).text();
      if (!metrics.includes(`doi_holdings_works_with_updates{env="production"} ${state.size}\n`)) return false;
    }
    return true;
  }, "both replicas' Updates API showing the feed");
  for (const base of urls) {
    expect(await updatesOf(base, [...state.keys()])).toEqual(
      Object.fromEntries(state) as Record<string, Record<string, unknown>[]>,
    );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(`doi_holdings_works_with_updates{env="production"} ${state.size}\n`);
  }
}

type Page = { changes: { doi: string; updates: unknown[] }[]; next: string; more: boolean };

async function page(base: string, after: string | undefined): Promise<Page> {
  const r = await fetch(`${base}/v2.2/updates/changes?limit=250${after ? `&after=${after}` : ''}`, {
    headers: { 'x-api-key': KEY },
  });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  return JSON.parse(text) as Page;
}

/** Pages until `more` is false, turning to the other replica after every page. */
async function sync(state: Map<string, unknown[]>, after?: string): Promise<string> {
  let cursor = after;
  for (let i = 0; ; i++) {
    const p = await page(urls[i % 2]!, cursor);
    for (const c of p.changes) {
      if (c.updates.length === 0) state.delete(c.doi);
      else state.set(c.doi, c.updates);
    }
    cursor = p.next;
    if (!p.more) return cursor;
  }
}

beforeAll(async () => {
  dir = tempDir('feed-replicas');
  drop = join(dir.path, 'shared-updates');
  mkdirSync(drop);
  replicas = ['a', 'b'].map((name) => {
    const home = join(dir.path, name);
    mkdirSync(home);
    return startDaemon(writeConfig(home, `[updates]\ndropDir = "${drop}"\n`).path);
  });
  urls = await Promise.all(replicas.map(daemonUrl));
});
afterAll(async () => {
  await Promise.all(replicas.map((d) => d.stop()));
  dir.remove();
});

describe('two replicas fed the same update files', () => {
  test('a client alternating between them ends with exactly what the Updates API gives, across a new file and a withdrawal', async () => {
    await dropFile('rw-1.csv', SAMPLE);
    const state = new Map<string, unknown[]>();
    let cursor = await sync(state);
    await expectApiAgrees(state);

    // the next day's file lacks Franken's record: both replicas withdraw it, and either continues the cursor
    await dropFile('rw-2.csv', csv(ROWS.filter((r) => r !== row(70000))));
    const fromB = await page(urls[1]!, cursor);
    expect(fromB.changes).toEqual([{ doi: FRANKEN_DOI, updates: [] }]);
    expect(await page(urls[0]!, cursor)).toEqual(fromB);
    cursor = await sync(state, cursor);
    expect(state.has(FRANKEN_DOI)).toBe(false);
    expect((await page(urls[0]!, cursor)).changes).toEqual([]);
    await expectApiAgrees(state);

    // their metrics show the same feed history: the same commit count and lineage
    const heads = await Promise.all(
      urls.map(async (u) =>
        (await (await fetch(`${u}/metrics`)).text())
          .split('\n')
          .filter((l) => /^doi_holdings_change_feed_(commit|lineage)\{env="production"\}/.test(l)),
      ),
    );
    expect(heads[0]).toHaveLength(2);
    expect(heads[0]).toEqual(heads[1]!);
  }, 90_000);
});
