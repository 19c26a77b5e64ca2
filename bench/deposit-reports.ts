/**
 * Deposit reports (GET /v2.2/platforms/{name}/deposits): what a page costs on a ledger the size of a 100M
 * deployment's, and what the platform index (src/store/environment/platform-files.ts) saves against a scan of the
 * whole ledger. A real LMDB store in a temporary folder gets FILES ledger entries (default 12,000, one small file
 * each, applied in passes of 100) over 20 platforms, with a few rejected lines each; then, in process (no socket):
 * app.handle() of the first page (20 files), of a page deep in the list (after = a file half-way), and one file;
 * a scan of every ledger entry picking one platform's and sorting them (what a page would cost without the index);
 * and the index's one-time build when a store made before it is opened for writing. Figures are printed, never
 * asserted: `bun bench/deposit-reports.ts` (FILES=n to change the size).
 */
import { open } from 'lmdb';
import { ReportKeys } from '../src/http/index.ts';
import { dataFileOf } from '../src/store/environment/index.ts';
import { Store } from '../src/store/index.ts';
import { makeApp, platformsWithoutApi } from '../test/http/http-support.ts';
import { tempDir } from '../test/support/fixtures.ts';
import { preparedFile } from '../test/support/prepared-file.ts';
import { fmt, percentile } from './lib/measure.ts';

const FILES = Number(process.env.FILES ?? 12_000);
const PLATFORMS = Array.from({ length: 20 }, (_, i) => `p${String(i).padStart(2, '0')}`);
const KEY = 'p00-report-key-0001';
const T0 = Date.UTC(2026, 0, 1);
const MAP = 1 << 30;

const dir = tempDir('doi-holdings-bench-reports-');
try {
  let store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  const loadStart = performance.now();
  for (let i = 0; i < FILES; i += 100) {
    const pass = [];
    for (let j = i; j < Math.min(FILES, i + 100); j++) {
      const platform = PLATFORMS[j % PLATFORMS.length]!;
      const lines = [{ doi: `10.5555/r${j}` }, { doi: 'junk' }, { doi: `10.5555/x${j}`, accessType: 'gratis' }];
      pass.push({ ...preparedFile(lines, { platform, time: T0 + j * 1000 }), inOrderGiven: true });
    }
    store.applyFilesSync(pass);
  }
  console.log(
    `ledger: ${fmt(FILES)} files over ${PLATFORMS.length} platforms, made in ${fmt((performance.now() - loadStart) / 1000, 1)} s`,
  );

  const platforms = platformsWithoutApi(...PLATFORMS).map((p) => (p.name === 'p00' ? { ...p, reportKey: KEY } : p));
  const app = makeApp({ production: { store } }, { reportKeys: new ReportKeys(platforms) });
  const all = store.platformFiles('p00', 100_000)!.entries;
  const middle = all[Math.floor(all.length / 2)]!.key.slice('p00/'.length);
  async function timeRequest(label: string, path: string, runs = 300): Promise<void> {
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = await app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': KEY } }));
      bytes = (await r.arrayBuffer()).byteLength;
      ms.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
    }
    console.log(
      `${label}: p50 ${fmt(percentile(ms, 50), 3)} ms, p99 ${fmt(percentile(ms, 99), 3)} ms, ${fmt(bytes)} bytes`,
    );
  }
  await timeRequest('first page (20 files, JSON)', '/v2.2/platforms/p00/deposits');
  await timeRequest('a page half-way (after=, 20 files)', `/v2.2/platforms/p00/deposits?after=${middle}`);
  await timeRequest('first page as HTML', '/v2.2/platforms/p00/deposits?format=html');
  await timeRequest('one file', `/v2.2/platforms/p00/deposits/${middle}`);

  const scans: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const mine = [...store.ledger()].filter((e) => e.platform === 'p00');
    mine.sort((a, b) => b.lastModified - a.lastModified || (a.key < b.key ? 1 : -1));
    scans.push(performance.now() - t);
  }
  console.log(
    `without the index, a scan of the whole ledger for one platform: p50 ${fmt(percentile(scans, 50), 1)} ms`,
  );

  // the store as the previous program left it: no index; then the timed writable open that builds it
  await store.close();
  const raw = open({ path: dataFileOf(`${dir.path}/production`), noSubdir: true, maxDbs: 12 });
  raw.openDB({ name: 'filesByPlatform', encoding: 'msgpack' }).clearSync();
  await raw.close();
  let t = performance.now();
  store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  const build = performance.now() - t;
  await store.close();
  t = performance.now();
  store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  const plain = performance.now() - t;
  await store.close();
  // another program committed since this one's mark (an older one after a rollback, or a crash): the open reads
  // the ledger through to check the index, and finds it good
  const other = open({ path: dataFileOf(`${dir.path}/production`), noSubdir: true, maxDbs: 12 });
  other.openDB({ name: 'meta', encoding: 'msgpack' }).putSync('bench', 1);
  await other.close();
  t = performance.now();
  store = Store.open(dir.path, 'production', { mapSizeBytes: MAP });
  const checked = performance.now() - t;
  await store.close();
  console.log(
    `one-time index build on open: ${fmt(build, 1)} ms (an open with the index built: ${fmt(plain, 1)} ms; ` +
      `one that checks it after another program's commit: ${fmt(checked, 1)} ms)`,
  );
} finally {
  dir.remove();
}
