/**
 * The fake Crossref REST API (test/support/crossref-api.ts) for scenario (f) of bench/entitlements.ts, in a
 * process of its own: `bun bench/lib/crossref-lookup-server.ts N DELAY_MS` serves N journal articles
 * (lookupWorks: "Benchmark work <i>: a study of lookups", DOI 10.5555/lookup.<i>), answers every call after
 * DELAY_MS, advertises 1000 calls a second and 50 at once, prints its URL, and runs until SIGTERM. SIGUSR1
 * prints `calls <n>`: the calls it has answered so far, counted on Crossref's side.
 */
import { startCrossrefApi } from '../../test/support/crossref-api.ts';
import { lookupWorks } from './lookup-works.ts';

const n = Number(process.argv[2] ?? 100);
const delayMs = Number(process.argv[3] ?? 50);
const api = await startCrossrefApi({ works: lookupWorks(n), delayMs });
console.log(api.url);
process.on('SIGUSR1', () => console.log(`calls ${api.calls.length}`));
process.once('SIGTERM', () => void api.stop().then(() => process.exit(0)));
