import { type Fault, FaultError, fault } from '../../base/index.ts';
import { doiKey } from '../../doi/index.ts';
import type { FeedImport, ReplaceReport, Store } from '../../store/index.ts';
import type { UpdateFormat } from '../../update-record/index.ts';
import type { ImportReport } from './import-report.ts';
import { readRows } from './read-rows.ts';

export interface ImportResult {
  parsed: { report: ImportReport; works: number };
  applied: Record<string, ReplaceReport>;
}

/**
 * Applies one update source to the stores (every configured environment gets the same update information).
 * A Retraction Watch CSV is the whole database: it replaces everything that feed gave before (a withdrawn
 * entry disappears). Crossref works JSON names the works it is about: only those works are replaced.
 * Rows stream from the source into each store's import scratch space (bounded memory: a 65k-row file is never
 * held whole); each store then swaps the feed in one transaction. A source failing part-way applies nothing,
 * nor one whose `signal` aborts before the commit (IMPORT_STOPPED); its scratch rows are removed either way.
 */
export async function importUpdates(
  stores: readonly Store[],
  format: UpdateFormat,
  chunks: AsyncIterable<Uint8Array>,
  onProgress?: (rows: number, bytes: number) => void,
  opts: { allowShrink?: boolean; signal?: AbortSignal } = {},
): Promise<ImportResult | Fault> {
  const { updates: rows, report, done } = readRows(format, chunks, onProgress);
  const mode = format === 'retraction-watch-csv' ? 'snapshot' : 'works';
  const imports = stores.map((s) => s.beginUpdatesImport(format, mode));
  const works = new Set<string>();
  const stopped = fault('IMPORT_STOPPED', 'the import was stopped before its commit: nothing of it was applied');
  try {
    for await (const row of rows) {
      if (opts.signal?.aborted) throw new FaultError(stopped);
      const key = doiKey(row.doi);
      works.add(key);
      for (const imp of imports) {
        const wait = imp.add(key, row);
        if (wait) await wait;
      }
    }
  } catch (e) {
    await Promise.all(imports.map((i) => i.abort()));
    throw e;
  }
  done();
  if (opts.signal?.aborted) {
    await Promise.all(imports.map((i) => i.abort()));
    return stopped;
  }
  const committed = await commitEvery(stores, imports, opts);
  if ('code' in committed) return committed;
  return { parsed: { report, works: works.size }, applied: committed.applied };
}

/**
 * Commits one import per store, in order. Every environment gets the same update information: a refusal in one
 * (its Fault, named by environment) stops the rest, whose imports are dropped. With several stores each is asked
 * first (a dry run: the same merge, rolled back) whether it would refuse, so that none commits when one would.
 */
export async function commitEvery(
  stores: readonly Store[],
  imports: readonly FeedImport[],
  opts: { allowShrink?: boolean } = {},
): Promise<{ applied: Record<string, ReplaceReport> } | Fault> {
  if (stores.length > 1 && !opts.allowShrink)
    for (let i = 0; i < stores.length; i++) {
      const would = await imports[i]!.commit({ dryRun: true });
      if (!('code' in would)) continue;
      await Promise.all(imports.map((imp) => imp.abort()));
      return { ...would, message: `${stores[i]!.env}: ${would.message}` };
    }
  const applied: Record<string, ReplaceReport> = {};
  for (let i = 0; i < stores.length; i++) {
    const result = await imports[i]!.commit(opts);
    if ('code' in result) {
      await Promise.all(imports.slice(i + 1).map((imp) => imp.abort()));
      return { ...result, message: `${stores[i]!.env}: ${result.message}` };
    }
    applied[stores[i]!.env] = result;
  }
  return { applied };
}
