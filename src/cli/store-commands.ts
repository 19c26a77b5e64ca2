import { existsSync, statSync } from 'node:fs';
import { type Fault, FaultError } from '../base/index.ts';
import type { Config, EnvName } from '../config/index.ts';
import { ACCESS_TYPES } from '../deposit/index.ts';
import { backupRefused, Store, storeFileIn, writeBackupFolder } from '../store/index.ts';
import { type HarvestState, loadState, PASSES } from '../updates/harvest/index.ts';
import { loadUrlState, type UrlSourceState } from '../updates/index.ts';
import { EXIT_OK, EXIT_USAGE, type Output } from './output.ts';
import { Progress } from './progress.ts';
import { fieldRows, type Listing, renderTable } from './table.ts';

/**
 * --stats: one JSON line per environment: live holdings per platform and access type, works with updates, the
 * ledger's counts, the file's size and free pages, per configured Crossref harvest (`harvests`) its last success,
 * the last window's figures and the index date reached, and per configured update URL (`urls`) its last success and
 * its last import's figures. Reads one snapshot while the daemon runs.
 */
export function statsCommand(
  store: Store,
  io: Output,
  harvestNames: readonly string[] = [],
  urls: readonly string[] = [],
  listing: Listing = { tables: false },
): number {
  const byPlatform: Record<string, Record<string, number>> = {};
  let total = 0;
  for (const h of store.liveHoldings({})) {
    const counts = (byPlatform[h.platform] ??= {
      total: 0,
      ...Object.fromEntries(ACCESS_TYPES.map((a) => [a, 0])),
      none: 0,
    });
    counts.total!++;
    counts[h.state.accessType ?? 'none']!++;
    total++;
  }
  const ledger = { applied: 0, quarantined: 0, conflicts: store.conflictCount() };
  for (const e of store.ledger()) ledger[e.outcome]++;
  const { seq } = store.appliedSeq();
  const line = {
    env: store.env,
    schemaVersion: store.schemaVersion(),
    holdings: { total, byPlatform },
    worksWithUpdates: store.updatesIndex.size,
    ledger,
    lastAppliedSeq: seq,
    unfinishedUpdateImportRows: store.importScratchRows(),
    harvests: sourcesStats(store, 'harvest', harvestNames, (name) => harvestStats(loadState(store, name))),
    urls: sourcesStats(store, 'url', urls, (url) => urlStats(loadUrlState(store, url))),
    store: store.pageFigures(),
  };
  if (!listing.tables) {
    io.out(JSON.stringify(line));
    return EXIT_OK;
  }
  // the platforms as rows of their own; the rest, one figure a row
  const { byPlatform: _, ...holdings } = line.holdings;
  for (const l of renderTable(['field', 'value'], fieldRows({ ...line, holdings }), listing.width)) io.out(l);
  const columns = ['total', ...ACCESS_TYPES, 'none'];
  const rows = Object.entries(byPlatform).map(([platform, c]) => [platform, ...columns.map((k) => c[k])]);
  io.out('');
  for (const l of renderTable(['platform', ...columns], rows, listing.width)) io.out(l);
  return EXIT_OK;
}

/**
 * What the store keeps of each configured update source of a kind (a harvest by name, a URL), by what `stats` makes
 * of its state. Its progress lives in the store it ran from (the daemon's: production), so another environment's
 * line names only the sources it holds a state of; production names every configured one.
 */
function sourcesStats(
  store: Store,
  kind: 'harvest' | 'url',
  ids: readonly string[],
  stats: (id: string) => object,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id of ids)
    if (store.env === 'production' || store.sourceState(kind, id) !== undefined) out[id] = stats(id);
  return out;
}

/** A harvest's line: its last success and failure, its last window's figures, the window under way. */
function harvestStats(h: HarvestState): object {
  const last = h.last && {
    from: h.last.from ?? null,
    until: h.last.until,
    full: h.last.full,
    works: h.last.works,
    rows: h.last.rows,
    used: h.last.used,
    skipped: h.last.skipped,
    pages: h.last.pages,
  };
  const w = h.window;
  return {
    lastSuccessAt: iso(h.lastSuccessAt),
    lastFailureAt: iso(h.lastFailureAt),
    lastFullAt: iso(h.lastFullAt ?? 0),
    lastError: h.lastError ?? null,
    reached: h.reached ?? null,
    last: last ?? null,
    window: w
      ? {
          from: w.from ?? null,
          until: w.until,
          full: w.full,
          pass: PASSES[w.pass]?.name ?? null,
          pages: w.pages,
          works: w.works,
          startedAt: iso(w.startedAt),
        }
      : null,
  };
}

/** An update URL's line: its last success and failure, its last import's figures. */
function urlStats(u: UrlSourceState): object {
  return {
    lastSuccessAt: iso(u.lastSuccessAt),
    lastFailureAt: iso(u.lastFailureAt),
    lastError: u.lastError ?? null,
    last: u.last ? { at: iso(u.last.at), rows: u.last.rows, used: u.last.used, works: u.last.works } : null,
  };
}

/** Why an environment's store cannot be opened to be copied (none made yet, say), or undefined when it can. */
async function unopenable(config: Config, env: EnvName): Promise<Fault | undefined> {
  try {
    await Store.open(config.store.dir, env, { mapSizeBytes: config.store.mapSizeBytes, readOnly: true }).close();
    return undefined;
  } catch (e) {
    if (e instanceof FaultError) return e.fault;
    throw e;
  }
}

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

/**
 * --backup DIR: a consistent, compacted copy of each store asked for, laid out like `store.dir` (a config whose
 * store.dir is DIR opens it; a replica can start from it). The daemon may run meanwhile. Each copy is opened again
 * and checked, and DIR appears only once every environment asked for is copied (writeBackupFolder): a backup that
 * failed part-way leaves no DIR. The reports are printed then, one line per environment.
 */
export async function backupCommand(
  dir: string,
  envs: readonly EnvName[],
  config: Config,
  io: Output,
  onTty: boolean,
): Promise<number> {
  // the target and every store are checked before anything is written
  let refused = backupRefused(dir);
  for (const env of envs) refused ??= await unopenable(config, env);
  if (refused) {
    io.err(`doi-holdings: ${refused.code}: ${refused.message}`);
    return EXIT_USAGE;
  }
  let reports: string[];
  try {
    reports = await writeBackupFolder(dir, async (partial) => {
      const lines: string[] = [];
      for (const env of envs) lines.push(await backupOne(env, partial, storeFileIn(dir, env), config, onTty));
      return lines;
    });
  } catch (e) {
    if (!(e instanceof FaultError)) throw e;
    io.err(`doi-holdings: ${e.code}: ${e.message}`);
    return EXIT_USAGE;
  }
  for (const line of reports) io.out(line);
  return EXIT_OK;
}

/** Copies one environment's store into the partial folder, opens the copy and checks it: its report line, naming `target`, where it will be. */
async function backupOne(
  env: EnvName,
  partial: string,
  target: string,
  config: Config,
  onTty: boolean,
): Promise<string> {
  const store = Store.open(config.store.dir, env, { mapSizeBytes: config.store.mapSizeBytes, readOnly: true });
  const progress = new Progress(onTty);
  const expected = store.pageFigures();
  const partialOf = storeFileIn(partial, env); // where the copy grows
  // off a terminal there is no line to show, so no file to look at either
  const timer = onTty
    ? setInterval(() => {
        const bytes = existsSync(partialOf) ? statSync(partialOf).size : 0;
        progress.update(
          (s) =>
            `backing up ${env}: ${(bytes / 1e6).toFixed(0)} MB of at most ${((expected.usedPages * expected.pageSize) / 1e6).toFixed(0)} MB, ${s} s`,
        );
      }, 200)
    : undefined;
  const started = performance.now();
  let copied: string;
  try {
    copied = await store.backupTo(partial);
  } finally {
    clearInterval(timer);
    progress.done();
    await store.close();
  }
  const copy = Store.open(partial, env, { mapSizeBytes: config.store.mapSizeBytes, readOnly: true });
  try {
    const live = Object.values(copy.liveCounts()).reduce((a, b) => a + b, 0);
    return JSON.stringify({
      env,
      backup: target,
      bytes: statSync(copied).size,
      schemaVersion: copy.schemaVersion(),
      lastAppliedSeq: copy.appliedSeq().seq,
      liveHoldings: live,
      sourceBytes: expected.fileBytes,
      seconds: Math.round(performance.now() - started) / 1000,
    });
  } finally {
    await copy.close();
  }
}
