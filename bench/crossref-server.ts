/**
 * The fake Crossref REST API (test/support/crossref-api.ts) in a process of its own, so that its CPU and heap are
 * not counted against a harvester measured in another: `bun bench/crossref-server.ts N [DAY]` serves N synthetic
 * works (syntheticWorks: one update row each), indexed on DAY (YYYY-MM-DD; default today, UTC: an incremental
 * window, which starts at the day the last one reached, sees them again), on a free loopback port, prints its URL,
 * and runs until SIGTERM. SIGUSR1 changes the updated date of every work's updates (a new one each time) and
 * prints `changed <n>` once the new list items are rendered: the next harvest then changes every update it reads.
 * The list items of the harvester's passes are rendered before the URL is printed (and after each change), so a
 * timed harvest does not wait for the fake to render them. Used by bench/harvest.ts.
 */
import { PASSES } from '../src/updates/harvest/index.ts';
import { type FakeWork, startCrossrefApi, syntheticWorks } from '../test/support/crossref-api.ts';
import { crossrefDate, itemJson } from '../test/support/crossref-works.ts';

const n = Number(process.argv[2] ?? 200_000);
const day = process.argv[3] ?? new Date().toISOString().slice(0, 10);
const api = await startCrossrefApi({ works: syntheticWorks(n, { days: [day] }) });
const render = () => {
  for (const work of api.works) for (const pass of PASSES) itemJson(work, pass.select.split(','));
};
render();
console.log(api.url);

let changes = 0;
process.on('SIGUSR1', () => {
  changes++;
  const updated = crossrefDate(
    `2020-${String(1 + (Math.floor(changes / 28) % 12)).padStart(2, '0')}-${String(1 + (changes % 28)).padStart(2, '0')}`,
  );
  for (const work of api.works)
    for (const field of ['update-to', 'updated-by'] as const) {
      const list = work[field];
      // a new value for the field: the fake's rendering cache sees only assigned fields
      if (Array.isArray(list)) (work as FakeWork)[field] = list.map((e) => ({ ...(e as object), updated }));
    }
  render();
  console.log(`changed ${changes}`);
});
process.once('SIGTERM', () => void api.stop().then(() => process.exit(0)));
