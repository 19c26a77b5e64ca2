import { afterEach, beforeEach, expect, test } from 'bun:test';
import { copyFileSync, createReadStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Store, servedUpdates } from '../../src/store/index.ts';
import { csvRecords } from '../../src/updates/index.ts';
import { runCli, type TestConfig, tempDir, waitFor, writeConfig } from '../support/fixtures.ts';
import { SAMPLE_PATH } from '../support/rw-sample.ts';
import { between, Child, Children, crashSettings, ExitedEarly, isEvent, seconds } from './crash-support.ts';

/**
 * Crash safety of an update import, timed from the inside (issue 20, item 1; docs/reliability.md). An import
 * goes into both environments, production then staging: rows stream into each store's scratch space (batches of
 * 10,000), then each store swaps the feed in in one transaction (docs/design.md, "Durability"). Two feeds, both
 * Retraction Watch CSVs made from the real sample: a first of 20,020 rows, and a second that withdraws, changes
 * and adds rows. The first half of the kills hit `--import-updates` of the first feed (the CLI, run on a
 * pseudo-terminal as an operator runs it, so it prints its progress line "importing FILE: 15,000 rows, ..."),
 * which is then run again untouched. The second feed is then dropped into the daemon's `updates.dropDir`, and
 * the other kills hit the daemon importing it; a daemon restarted untouched finishes it by itself (a dropped
 * file's state is saved only after both commits), and its Updates API then serves it.
 *
 * Each kill is a SIGKILL at a seeded point, then 0-80 ms:
 *   - streaming: the CLI's first progress line at or past a seeded multiple of 5,000 rows, or (the daemon logs
 *     nothing while it imports) its first 10,000 rows written to production's scratch space;
 *   - production's commit: every row in production's scratch space (its commit flushed the last batch);
 *   - staging's commit: production's commit visible (its `updatesGen` moved).
 * The store is read as a second process would (read-only, every 2 ms) for the commits: the CLI prints nothing
 * between its last progress line and its report.
 *
 * After each kill, each environment holds exactly the feed it held before the import or the feed being imported,
 * compared work by work (updates and their events) with a clean import of the same feeds into another store;
 * never a mix. Production and staging are separate LMDB environments, each committed in its own transaction, so a
 * kill in staging's commit leaves production on the new feed and staging on the old one until the import runs
 * again; the test prints when that happens, and checks that staging never holds a feed production does not.
 */

const FEED_ROWS = 20_020;
const MARK = 5_000;
/**
 * The stores' map: a killed import's scratch rows stay for six hours (about 0.9 KB a row here), so 50 kills
 * (`make soak`) leave about 0.8 GB of them; the map is address space, the file grows as needed.
 */
const MAP_BYTES = 4 * 2 ** 30;

const s = crashSettings('crash-update-import');
let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let dropDir: string;
const children = new Children();

beforeEach(() => {
  dir = tempDir('doi-holdings-crash-updates-');
  cfg = writeConfig(dir.path, '\n[updates]\ndropDir = "drop"\n');
  writeFileSync(
    cfg.path,
    readFileSync(cfg.path, 'utf8').replace('mapSizeGiB = 1\n', `mapSizeGiB = ${MAP_BYTES / 2 ** 30}\n`),
  );
  dropDir = join(dir.path, 'drop');
  mkdirSync(dropDir);
});
afterEach(async () => {
  await children.killAll();
  dir.remove();
});

const quote = (f: string) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);

/**
 * Two Retraction Watch CSVs made from the real sample: the first, `FEED_ROWS` rows (the sample's rows again and
 * again, copy n with `.n<n>` appended to its DOIs); the second, the first with a seeded 12% of rows left out
 * (withdrawn), 10% changed (another date, or a reason added) and 8% more rows (new works).
 */
async function makeFeeds(
  rng: () => number,
): Promise<{ feeds: [string, string]; rowCounts: [number, number]; works: string[] }> {
  const rows: string[][] = [];
  for await (const { fields } of csvRecords(createReadStream(SAMPLE_PATH))) rows.push(fields);
  const [header, ...sample] = rows as [string[], ...string[][]];
  const col = (name: string) => header.indexOf(name);
  const [ORIGINAL, NOTICE, DATE, REASON, ID] = [
    col('OriginalPaperDOI'),
    col('RetractionDOI'),
    col('RetractionDate'),
    col('Reason'),
    col('Record ID'),
  ];
  const copyOf = (i: number, tag: string) => {
    const copy = Math.floor(i / sample.length);
    const row = [...sample[i % sample.length]!];
    row[ID] = String(Number(row[ID]) + (tag === 'n' ? 0 : 500_000) + copy * 1_000_000);
    if (copy > 0 || tag !== 'n')
      for (const c of [ORIGINAL, NOTICE]) if (row[c]!.startsWith('10.')) row[c] = `${row[c]}.${tag}${copy}`;
    return row;
  };
  const first = Array.from({ length: FEED_ROWS }, (_, i) => copyOf(i, 'n'));
  const second: string[][] = [];
  for (const row of first) {
    const r = rng();
    if (r < 0.12) continue;
    if (r < 0.22) {
      const changed = [...row];
      if (rng() < 0.5) changed[DATE] = `${between(rng, 1, 12)}/${between(rng, 1, 28)}/2024 0:00`;
      else changed[REASON] = `${changed[REASON]}+Concerns/Issues About Data;`;
      second.push(changed);
    } else second.push(row);
  }
  for (let i = 0; i < Math.round(FEED_ROWS * 0.08); i++) second.push(copyOf(between(rng, 0, FEED_ROWS - 1), 'm'));
  const text = (body: string[][]) => `${[header, ...body].map((r) => r.map(quote).join(',')).join('\r\n')}\r\n`;
  const feeds: [string, string] = [join(dir.path, 'rw-1.csv'), join(dir.path, 'rw-2.csv')];
  writeFileSync(feeds[0], text(first));
  writeFileSync(feeds[1], text(second));
  const works = new Set<string>();
  for (const r of [...first, ...second]) if (r[ORIGINAL]!.startsWith('10.')) works.add(r[ORIGINAL]!.toLowerCase());
  return { feeds, rowCounts: [first.length, second.length], works: [...works].sort() };
}

type Snapshot = Map<string, string>;

/**
 * Production's rows of unfinished imports in the scratch space (killed imports leave theirs, for a later import to
 * clear) and its update generation (moved by each import that changed something).
 */
async function storeFigures(storeDir: string): Promise<{ scratch: number; gen: number }> {
  const store = Store.open(storeDir, 'production', { mapSizeBytes: MAP_BYTES, readOnly: true });
  try {
    return { scratch: store.importScratchRows(), gen: store.changeStamp().updatesGen };
  } finally {
    await store.close();
  }
}

/**
 * Reads production's store (read-only, as a second process) every 2 ms until `reached` says the import has got
 * that far; ExitedEarly when the import ends first.
 */
async function watchStore(storeDir: string, c: Child, reached: (store: Store) => boolean): Promise<void> {
  const store = Store.open(storeDir, 'production', { mapSizeBytes: MAP_BYTES, readOnly: true });
  try {
    while (!reached(store)) {
      if (c.exited) throw new ExitedEarly(c.proc.exitCode, 1, 0, c.lines.slice(-5));
      await Bun.sleep(2);
    }
  } finally {
    await store.close();
  }
}

/** Every work's stored update entry (its updates with their feed, and its events), as JSON by DOI key. */
async function snapshot(storeDir: string, env: 'production' | 'staging', works: readonly string[]): Promise<Snapshot> {
  const store = Store.open(storeDir, env, { mapSizeBytes: MAP_BYTES, readOnly: true });
  try {
    return new Map(works.map((w) => [w, JSON.stringify(store.updatesOf(w) ?? null)]));
  } finally {
    await store.close();
  }
}

/** Which of the named states `got` is, or how it mixes them. */
function whichState(got: Snapshot, states: Record<string, Snapshot>): string {
  for (const [name, want] of Object.entries(states)) if ([...want].every(([k, v]) => got.get(k) === v)) return name;
  const like = Object.entries(states).map(
    ([name, want]) => `${[...want].filter(([k, v]) => got.get(k) === v).length} works as in ${name}`,
  );
  return `a mix (${like.join(', ')}, of ${got.size})`;
}

test(
  `SIGKILL during an update import (--import-updates, then the daemon's drop folder), ${s.kills} times while rows stream or a store commits, + 0-80 ms: each environment holds the old feed or the new one, never a mix`,
  async () => {
    const t0 = performance.now();
    expect(readFileSync(cfg.path, 'utf8')).toContain(`mapSizeGiB = ${MAP_BYTES / 2 ** 30}\n`);
    const { feeds, rowCounts, works } = await makeFeeds(s.rng);
    s.say(
      `feeds: ${feeds.map((f) => `${Bun.file(f).size.toLocaleString('en')} bytes`).join(', ')}; ${works.length.toLocaleString('en')} works named (${seconds(performance.now() - t0)})`,
    );

    // the clean run: both feeds imported one after the other, untouched, into a production-only store
    let t = performance.now();
    const refCfg = join(dir.path, 'ref.toml');
    writeFileSync(
      refCfg,
      `[store]\ndir = "ref-db"\nmapSizeGiB = 1\n[buckets.production]\nkind = "local"\npath = "bucket"\n[[platforms]]\nname = "acme"\n`,
    );
    const states: Record<string, Snapshot> = { empty: new Map(works.map((w) => [w, 'null'])) };
    for (const [i, feed] of feeds.entries()) {
      const r = await runCli(['--import-updates', feed, '--config', refCfg]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      states[`feed ${i + 1}`] = await snapshot(join(dir.path, 'ref-db'), 'production', works);
    }
    const changedWorks = works.filter((w) => states['feed 1']!.get(w) !== states['feed 2']!.get(w)).length;
    expect(changedWorks).toBeGreaterThan(FEED_ROWS / 5);
    s.say(
      `clean run: both feeds imported in ${seconds(performance.now() - t)}; feed 2 changes ${changedWorks.toLocaleString('en')} works`,
    );

    // the stores exist before the first kill (a kill timed by production's commit reads them)
    for (const env of ['production', 'staging'] as const)
      await Store.open(join(dir.path, 'db'), env, { mapSizeBytes: MAP_BYTES }).close();

    const storeDir = join(dir.path, 'db');
    const both = async () => ({
      production: await snapshot(storeDir, 'production', works),
      staging: await snapshot(storeDir, 'staging', works),
    });
    const track = (c: Child) => children.keep(c);
    const cli = (f: number) => track(new Child(['--import-updates', feeds[f]!, '--config', cfg.path], { tty: true }));
    const daemon = () => track(new Child(['--config', cfg.path]));
    const firstFeedKills = Math.ceil(s.kills / 2);
    /** what each environment holds now (checked after every kill) */
    let state = { production: 'empty', staging: 'empty' };
    const outcomes: Record<string, number> = {};
    /** kills that came before the import reported its end: what this test is about */
    let midImport = 0;

    for (let i = 0; i < s.kills; i++) {
      const phase0 = between(s.rng, 0, 2);
      const j = between(s.rng, 1, 1_000_000);
      const delay = between(s.rng, 0, 80);
      if (i === firstFeedKills) {
        // half-way: feed 1 is run again untouched (a rerun completes it everywhere), then feed 2 goes to the daemon
        t = performance.now();
        expect(await cli(0).exit()).toBe(0);
        const now = await both();
        expect([whichState(now.production, states), whichState(now.staging, states)]).toEqual(['feed 1', 'feed 1']);
        s.say(`feed 1 run again untouched: complete in both environments (${seconds(performance.now() - t)})`);
        state = { production: 'feed 1', staging: 'feed 1' };
        copyFileSync(feeds[1], join(dropDir, 'rw-2.csv'));
      }
      const feed = i < firstFeedKills ? 0 : 1;
      const after = `feed ${feed + 1}`;
      const via = feed === 0 ? '--import-updates' : 'the daemon';
      // production's commit moves nothing when production already holds the feed: then the kill goes to that commit
      const phase = phase0 === 2 && state.production === after ? 1 : phase0;
      const before0 = await storeFigures(storeDir);
      t = performance.now();
      const c = feed === 0 ? cli(0) : daemon();
      let what: string;
      let early = false;
      try {
        if (phase === 0 && feed === 0) {
          const mark = (1 + (j % (Math.floor(rowCounts[0] / MARK) - 1))) * MARK; // marks met while streaming
          what = `progress line >= ${mark.toLocaleString('en')} rows`;
          const rowsOf = (l: string) => Number(/: ([\d,]+) rows/.exec(l)?.[1]?.replace(/,/g, '') ?? -1);
          const line = await c.nth((l) => l.startsWith('importing ') && rowsOf(l) >= mark, 1, 60_000);
          what += ` ("${line.replace(/^.*: (?=[\d,]+ rows)/, '')}" at ${Math.round(performance.now() - t)} ms)`;
        } else if (phase === 0) {
          what = "the first 10,000 rows in production's scratch space";
          await watchStore(storeDir, c, (store) => store.importScratchRows() >= before0.scratch + 10_000);
        } else if (phase === 1) {
          // the rows are all in production's scratch space: its commit() has flushed them and swaps the feed in now
          what = "production's commit (all rows in its scratch space)";
          await watchStore(storeDir, c, (store) => store.importScratchRows() >= before0.scratch + rowCounts[feed]!);
        } else {
          what = "staging's commit (production's visible)";
          await watchStore(storeDir, c, (store) => store.changeStamp().updatesGen !== before0.gen);
        }
      } catch (e) {
        if (!(e instanceof ExitedEarly)) throw e;
        what = 'the end (the import finished before its mark)';
        early = true;
      }
      if (!early) await Bun.sleep(delay);
      const alive = !c.exited;
      await c.kill();
      // all it wrote is read now: a report (the CLI's JSON line, the daemon's updates.imported) came before the kill
      const reported = c.lines.some(feed === 0 ? (l) => l.startsWith('{"source":') : isEvent('updates.imported'));
      if (!reported) midImport++;
      const now = await both();
      const got = { production: whichState(now.production, states), staging: whichState(now.staging, states) };
      const was =
        state.production === state.staging
          ? state.production
          : `production ${state.production}, staging ${state.staging}`;
      const landed =
        got.production === got.staging ? got.production : `production ${got.production}, staging ${got.staging}`;
      s.say(
        `kill ${i + 1}/${s.kills}: ${via} importing ${after} over ${was}, at ${what} + ${delay} ms -> ${alive ? landed : `${landed}, after it had exited`} (${seconds(performance.now() - t)})`,
      );
      const outcome = !alive
        ? 'after the end'
        : landed === after
          ? 'new feed everywhere'
          : landed === was
            ? 'as before'
            : 'production new, staging not yet';
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      // each environment: what it held, or the feed being imported; nothing else (a mix would name neither)
      for (const env of ['production', 'staging'] as const) expect([state[env], after]).toContain(got[env]);
      // production commits first: staging never holds a feed production does not
      if (got.staging === after) expect(got.production).toBe(after);
      state = got;
    }
    s.say(`${midImport} of ${s.kills} kills landed before the import's end`);
    // kills that all came after the import's end would show nothing of a crash mid-way
    expect(midImport).toBeGreaterThan(0);
    if (s.kills === 1) {
      expect(await cli(0).exit()).toBe(0);
      copyFileSync(feeds[1], join(dropDir, 'rw-2.csv'));
    }

    // the daemon restarted untouched finishes feed 2 by itself, in both environments, and serves it
    t = performance.now();
    const d = daemon();
    await d.nth(isEvent('daemon.started'), 1, 30_000);
    // it imports the dropped file again unless a kill landed after both commits (then its state may be saved)
    if (state.production !== 'feed 2' || state.staging !== 'feed 2')
      await d.nth(isEvent('updates.imported'), 1, 60_000);
    const final = await both();
    expect([whichState(final.production, states), whichState(final.staging, states)]).toEqual(['feed 2', 'feed 2']);
    s.say(
      `the daemon restarted untouched holds feed 2 in both environments after ${seconds(performance.now() - t)}; outcomes: ${JSON.stringify(outcomes)}`,
    );
    const url = (JSON.parse(d.lines.find(isEvent('daemon.started'))!) as { url: string }).url.replace(/\/$/, '');
    const ref = Store.open(join(dir.path, 'ref-db'), 'production', { mapSizeBytes: MAP_BYTES, readOnly: true });
    try {
      const sample = works.filter((_, i) => i % 97 === 0);
      // the import is committed when it is logged; the Updates API's index is read again after it, on a worker
      // once reads are slow (its first read, on a worker as the daemon started, may have been), the last table
      // answering meanwhile
      const served = async (path: string) => {
        const dois = sample.slice(0, 100);
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
          body: JSON.stringify({ dois }),
        });
        const { documents } = (await res.json()) as { documents: { updates: unknown[] }[] };
        return Bun.deepEquals(
          documents.map((x) => x.updates),
          dois.map((w) => servedUpdates(ref.updatesOf(w))),
        );
      };
      await waitFor(
        async () => (await served('/v2.2/updates')) && (await served('/staging/v2.2/updates')),
        'both environments serving feed 2',
        15_000,
      );
      for (const path of ['/v2.2/updates', '/staging/v2.2/updates'])
        for (let i = 0; i < sample.length; i += 100) {
          const dois = sample.slice(i, i + 100);
          const res = await fetch(`${url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
            body: JSON.stringify({ dois }),
          });
          expect(res.status).toBe(200);
          const { documents } = (await res.json()) as { documents: { updates: unknown[] }[] };
          expect(documents.map((x) => x.updates)).toEqual(dois.map((w) => servedUpdates(ref.updatesOf(w))));
        }
      s.say(`Updates API of both environments serves feed 2 (${sample.length} works asked)`);
    } finally {
      await ref.close();
    }
    expect(await d.stop()).toBe(0);
    // killed imports leave their scratch rows; a later import removes them once they are six hours old
    const left: string[] = [];
    for (const env of ['production', 'staging'] as const) {
      const st = Store.open(storeDir, env, { mapSizeBytes: MAP_BYTES, readOnly: true });
      left.push(
        `${env} ${st.importScratchRows().toLocaleString('en')} (store pages used: ${((st.pageFigures().usedPages * st.pageFigures().pageSize) / 1e6).toFixed(0)} MB)`,
      );
      await st.close();
    }
    s.say(`scratch rows left by the killed imports: ${left.join(', ')}; done in ${seconds(performance.now() - t0)}`);
  },
  120_000 + s.kills * 20_000,
);
