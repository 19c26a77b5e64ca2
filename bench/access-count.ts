/**
 * The access counters' one-time count (docs/design.md, "Store layout"): a store of the ingest benchmark's 1M
 * holdings (its files of (a), queued as a daemon starting on a full bucket applies them), its access counters
 * taken away as a store of an older program has none, then opened for writing, which counts them from the
 * holdings. Prints the count's time.
 *   bun bench/access-count.ts
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../src/base/log.ts';
import { DEFAULT_INGEST } from '../src/config/index.ts';
import { WorkerPreparer } from '../src/ingest/file-preparer.ts';
import { Ingestor } from '../src/ingest/index.ts';
import { META, openEnvironment } from '../src/store/environment/environment.ts';
import { Store } from '../src/store/index.ts';
import { PLATFORM_NAMES } from './lib/deposit-generator.ts';
import { BENCH_DIR, ingestData } from './lib/ingest-data.ts';

const MAP = 16 * 1024 ** 3;
const { dir: data, manifest } = await ingestData();
const work = join(BENCH_DIR, 'access-count-work');
rmSync(work, { recursive: true, force: true });
let store = Store.open(work, 'production', { mapSizeBytes: MAP });
const root = join(data, 'bucket');
const ingestor = new Ingestor({
  env: 'production',
  store,
  root,
  platforms: new Set(PLATFORM_NAMES),
  settings: { ...DEFAULT_INGEST },
  log: silentLogger,
  preparer: new WorkerPreparer(),
});
await ingestor.submit(manifest.a);
await ingestor.idle();
await ingestor.close();
const live = Object.values(store.liveCounts()).reduce((a, b) => a + b, 0);
await store.close();

const dbs = openEnvironment(join(work, 'production'), { mapSizeBytes: MAP });
await dbs.root.transaction(() => {
  for (const key of dbs.meta.getKeys({ ...META.liveByAccessRange })) dbs.meta.removeSync(key);
  dbs.meta.removeSync(META.liveByAccessAt);
});
await dbs.root.close();

const counted: Record<string, unknown>[] = [];
const t0 = performance.now();
store = Store.open(work, 'production', { mapSizeBytes: MAP, log: { log: (_l, _e, f) => counted.push(f ?? {}) } });
const openMs = performance.now() - t0;
const sum = Object.values(store.liveCountsByAccess() ?? {})
  .flatMap((c) => Object.values(c))
  .reduce((a, b) => a + b, 0);
await store.close();
if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
console.log(
  `live holdings ${live.toLocaleString('en')}; counted ${sum.toLocaleString('en')} in ${JSON.stringify(counted)}; the writable open took ${openMs.toFixed(0)} ms`,
);
