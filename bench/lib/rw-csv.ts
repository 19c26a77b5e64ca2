import { createReadStream, writeFileSync } from 'node:fs';
import { csvRecords } from '../../src/updates/index.ts';
import { SAMPLE_PATH } from '../../test/support/rw-sample.ts';

/**
 * A Retraction Watch CSV of `rows` rows synthesised from the 3,000-row sample (bench/updates-import.ts, bench/harvest.ts):
 * copy n of the sample gets `.n<n>` appended to every real DOI and a new Record ID. Returns the file's size.
 */
export async function writeRetractionWatchCsv(path: string, rows: number): Promise<number> {
  const records: string[][] = [];
  for await (const { fields } of csvRecords(createReadStream(SAMPLE_PATH))) records.push(fields);
  const [header, ...sample] = records as [string[], ...string[][]];
  const at = (name: string) => header.indexOf(name);
  const doiCols = [at('OriginalPaperDOI'), at('RetractionDOI')];
  const idCol = at('Record ID');
  const quote = (f: string) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);
  const out: string[] = [header.map(quote).join(',')];
  for (let i = 0; out.length <= rows; i++) {
    const copy = Math.floor(i / sample.length);
    const row = [...sample[i % sample.length]!];
    if (copy > 0) {
      row[idCol] = String(Number(row[idCol]) + copy * 1_000_000);
      for (const c of doiCols) if (row[c]!.startsWith('10.')) row[c] = `${row[c]}.n${copy}`;
    }
    out.push(row.map(quote).join(','));
  }
  writeFileSync(path, `${out.join('\r\n')}\r\n`);
  return Bun.file(path).size;
}
