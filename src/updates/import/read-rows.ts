import { doiKey } from '../../doi/index.ts';
import type { WorkUpdates } from '../../store/index.ts';
import { type ImportRow, type UpdateFormat, updateIdentity } from '../../update-record/index.ts';
import { readCrossref } from './crossref.ts';
import { type ImportReport, newReport } from './import-report.ts';
import { readRetractionWatch } from './retraction-watch.ts';

export interface ParsedUpdates {
  /** DOI key -> the work's updates from this source, one per (source, updateDoi, updateType): the later row wins */
  works: Map<string, WorkUpdates>;
  report: ImportReport;
}

/** Reads a whole source into per-work update lists (65k rows are a few MB: held in memory, rows streamed). */
export async function readUpdates(
  format: UpdateFormat,
  chunks: AsyncIterable<Uint8Array>,
  onProgress?: (rows: number, bytes: number) => void,
): Promise<ParsedUpdates> {
  const rows = readRows(format, chunks, onProgress);
  const works = await collect(rows.updates);
  rows.done();
  return { works, report: rows.report };
}

/**
 * The rows of a source as work updates, streamed; `report` counts them (and the rows that cannot be used) and
 * `done()` sends the last progress figure.
 */
export function readRows(
  format: UpdateFormat,
  chunks: AsyncIterable<Uint8Array>,
  onProgress?: (rows: number, bytes: number) => void,
): { updates: AsyncIterable<ImportRow>; report: ImportReport; done(): void } {
  const report = newReport();
  let bytes = 0;
  const counted = (async function* () {
    for await (const c of chunks) {
      bytes += c.length;
      yield c;
    }
  })();
  const progress = onProgress ? (rows: number) => onProgress(rows, bytes) : undefined;
  const updates =
    format === 'retraction-watch-csv' ? readRetractionWatch(counted, report, progress) : readCrossref(counted, report);
  return { updates, report, done: () => onProgress?.(report.rows, bytes) };
}

async function collect(updates: AsyncIterable<ImportRow>): Promise<Map<string, WorkUpdates>> {
  const byWork = new Map<string, { doi: string; byId: Map<string, WorkUpdates['updates'][number]> }>();
  for await (const { doi, update } of updates) {
    const key = doiKey(doi);
    let w = byWork.get(key);
    if (!w) byWork.set(key, (w = { doi, byId: new Map() }));
    if (update) w.byId.set(updateIdentity(update), update);
  }
  return new Map([...byWork].map(([key, w]) => [key, { doi: w.doi, updates: [...w.byId.values()] }]));
}
