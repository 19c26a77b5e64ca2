import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The real Retraction Watch sample (test/fixtures, see PROVENANCE.md there) and a few of its records, for tests
 * that build CSV files from it. Expected values were read from the CSV with Python's csv module, not from our
 * importer.
 */
export const SAMPLE_PATH = join(import.meta.dir, '..', 'fixtures', 'retraction_watch_sample.csv');
export const SAMPLE = readFileSync(SAMPLE_PATH, 'utf8');
/** The sample has one record per line (no quoted line breaks): header, then rows keyed by Record ID. */
export const [HEADER, ...ROWS] = SAMPLE.split('\n').filter((l) => l !== '') as [string, ...string[]];

export function row(recordId: number): string {
  const found = ROWS.find((l) => l.startsWith(`${recordId},`));
  if (!found) throw new Error(`no row ${recordId} in the sample`);
  return found;
}

export const csv = (rows: readonly string[]): string => `${HEADER}\n${rows.join('\n')}\n`;

/** Record 70000: a retraction with a notice DOI and one URL. */
export const FRANKEN_DOI = '10.1155/2008/961753';
export const FRANKEN = {
  updateDoi: '10.1155/2015/982750',
  source: 'retraction-watch',
  updateType: 'retraction',
  updateDate: '2015-02-02',
  reasons: ['Duplication of Text', 'Euphemisms for Duplication', 'Euphemisms for Plagiarism', 'Plagiarism of Text'],
  urls: [
    'http://retractionwatch.com/2015/01/19/franken-paper-u-s-federal-contractor-heads-grave/',
    'https://doi.org/10.1155/2015/982750',
  ],
};
/** Record 70264: RetractionDOI "Unavailable", no URLS. */
export const UNAVAILABLE_DOI = '10.18384/2224-0209-2015-4-719';
export const UNAVAILABLE = {
  updateDoi: null,
  source: 'retraction-watch',
  updateType: 'retraction',
  updateDate: '2019-02-25',
  reasons: ['Duplication of/in Article'],
  urls: [],
};
