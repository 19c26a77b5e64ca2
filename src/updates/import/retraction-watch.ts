import { FaultError, fault } from '../../base/index.ts';
import { readDoiForm } from '../../doi/index.ts';
import type { WorkUpdate } from '../../update-record/index.ts';
import { parseSourceDate } from '../../update-record/index.ts';
import { csvRecords } from './csv.ts';
import { type ImportReport, skip } from './import-report.ts';
import { normaliseUpdateType } from './update-type.ts';

/**
 * The Retraction Watch database CSV as Crossref publishes it (its format facts: docs/interface.md, "Where update information comes from", and test/fixtures/PROVENANCE.md). Columns are
 * found by header name; each usable row becomes one update attached to its OriginalPaperDOI.
 */

const REQUIRED = ['OriginalPaperDOI', 'RetractionDOI', 'RetractionDate', 'RetractionNature', 'Reason', 'URLS'] as const;
const MISSING_DOI = new Set(['', 'unavailable', 'n/a', 'na', 'none', 'not available']);

/** Streams updates; rows that cannot be used are counted in `report`. Throws a FaultError only for a file without the header's columns. */
export async function* readRetractionWatch(
  chunks: AsyncIterable<Uint8Array | string>,
  report: ImportReport,
  onRow?: (rows: number) => void,
): AsyncGenerator<WorkUpdate> {
  type Columns = Record<(typeof REQUIRED)[number], number>;
  let col: Columns | undefined;
  let width = 0;
  // Record ID is optional: it only joins a row to the same notice arriving through Crossref
  let recordCol = -1;
  for await (const { fields, line } of csvRecords(chunks)) {
    if (!col) {
      const names = fields.map((f) => f.trim());
      const missing = REQUIRED.filter((r) => !names.includes(r));
      if (missing.length > 0)
        throw new FaultError(
          fault(
            'RW_MISSING_COLUMN',
            `not a Retraction Watch CSV: the header has no ${missing.join(', ')} column${missing.length > 1 ? 's' : ''}`,
          ),
        );
      const found = Object.fromEntries(REQUIRED.map((r) => [r, names.indexOf(r)])) as Columns;
      col = found;
      recordCol = names.indexOf('Record ID');
      width = Math.max(...Object.values(found)) + 1;
      continue;
    }
    report.rows++;
    if (onRow && report.rows % 5000 === 0) onRow(report.rows);
    if (fields.length < width) {
      skip(report, line, 'SHORT_ROW', `line ${line}: ${fields.length} fields, the header needs at least ${width}`);
      continue;
    }
    const rawOriginal = fields[col.OriginalPaperDOI]!.trim();
    if (MISSING_DOI.has(rawOriginal.toLowerCase())) {
      skip(
        report,
        line,
        'NO_ORIGINAL_DOI',
        `line ${line}: OriginalPaperDOI is ${rawOriginal ? JSON.stringify(rawOriginal) : 'empty'}`,
      );
      continue;
    }
    const form = readDoiForm(rawOriginal);
    if (form.problem !== undefined) {
      skip(
        report,
        line,
        'BAD_DOI',
        `line ${line}: OriginalPaperDOI ${JSON.stringify(rawOriginal.slice(0, 80))}: ${form.problem}`,
      );
      continue;
    }
    const doi = form.bare;
    const date = parseSourceDate(fields[col.RetractionDate]!);
    if (!date) {
      skip(
        report,
        line,
        'BAD_DATE',
        `line ${line}: RetractionDate ${JSON.stringify(fields[col.RetractionDate])} is not a date`,
      );
      continue;
    }
    const nature = normaliseUpdateType(fields[col.RetractionNature]!);
    if (!nature) {
      skip(report, line, 'NO_UPDATE_TYPE', `line ${line}: RetractionNature is empty`);
      continue;
    }
    const updateDoi = noticeDoi(fields[col.RetractionDOI]!);
    const urls = list(fields[col.URLS]!);
    if (updateDoi) urls.push(`https://doi.org/${updateDoi}`);
    report.used++;
    const recordId = recordCol >= 0 ? fields[recordCol]?.trim() : undefined;
    yield {
      doi,
      ...(recordId ? { recordId } : {}),
      update: {
        updateDoi,
        source: 'retraction-watch',
        updateType: nature,
        updateDate: date,
        reasons: list(fields[col.Reason]!)
          .map((r) => r.replace(/^\+\s*/, ''))
          .filter((r) => r !== ''),
        urls: [...new Set(urls)],
      },
    };
  }
  if (!col) throw new FaultError(fault('RW_EMPTY', 'the file is empty: no header row'));
}

/** The notice DOI, or null when the source has none (`unavailable`, empty, or not a DOI). */
function noticeDoi(raw: string): string | null {
  const s = raw.trim();
  if (MISSING_DOI.has(s.toLowerCase())) return null;
  const form = readDoiForm(s);
  return form.problem === undefined ? form.bare : null;
}

/** `a;b;c;` lists: trimmed, empties dropped. */
function list(raw: string): string[] {
  return raw
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
