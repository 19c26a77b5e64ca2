import type { Store } from '../../src/store/index.ts';
import { importUpdates } from '../../src/updates/index.ts';

/** Update imports as the tests write them: Retraction Watch CSV rows and Crossref works, through the real importer. */

/**
 * An import's figures, by the names the daemon's `updates.imported` line and the `--import-updates` report share
 * (docs/operations.md, "Logs"), in their order.
 */
export const IMPORT_FIGURES = ['source', 'format', 'rows', 'used', 'works', 'skipped', 'firstSkipped', 'applied', 'ms'];

export const RW_CSV_HEAD = 'Record ID,OriginalPaperDOI,RetractionDOI,RetractionDate,RetractionNature,Reason,URLS';

async function* bytes(text: string) {
  yield Buffer.from(text);
}

/** Imports a Retraction Watch CSV of these rows (under RW_CSV_HEAD) as the whole database; throws on a fault. */
export async function importCsvRows(store: Store, rows: string[]): Promise<void> {
  const r = await importUpdates(
    [store],
    'retraction-watch-csv',
    bytes(`${[RW_CSV_HEAD, ...rows].join('\n')}\n`),
    undefined,
    { allowShrink: true },
  );
  if ('code' in r) throw new Error(r.message);
}

/** Imports a Crossref works record of `work` with these `updated-by` entries, as a file is; throws on a fault. */
export async function importUpdatedBy(store: Store, work: string, updatedBy: object[]): Promise<void> {
  const r = await importUpdates(
    [store],
    'crossref-json',
    bytes(JSON.stringify({ message: { DOI: work, 'updated-by': updatedBy } })),
  );
  if ('code' in r) throw new Error(r.message);
}

/** Retraction Watch's assertion as Crossref relays it in `updated-by`. */
export function rwRelay(
  notice: string,
  recordId: string | undefined,
  type = 'retraction',
  date = [2015, 2, 2],
): object {
  return {
    DOI: notice,
    type,
    source: 'retraction-watch',
    ...(recordId ? { 'record-id': recordId } : {}),
    updated: { 'date-parts': [date] },
  };
}
