import { describe, expect, test } from 'bun:test';
import { FaultError } from '../../../src/base/fault.ts';
import { csvRecords, newReport, readRetractionWatch, type WorkUpdate } from '../../../src/updates/index.ts';
import { FRANKEN, FRANKEN_DOI, SAMPLE_PATH as SAMPLE } from '../../support/rw-sample.ts';

async function importAll(chunks: AsyncIterable<Uint8Array | string>) {
  const report = newReport();
  const out: WorkUpdate[] = [];
  for await (const u of readRetractionWatch(chunks, report)) out.push(u);
  return { out, report };
}

async function* inChunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('the real 3,000-row sample', () => {
  test('every row is used and RetractionNature counts match the file (checked independently with Python csv)', async () => {
    const { out, report } = await importAll(Bun.file(SAMPLE).stream());
    expect(report).toMatchObject({ rows: 3000, used: 3000, skipped: {} });
    const byType: Record<string, number> = {};
    for (const u of out) byType[u.update.updateType] = (byType[u.update.updateType] ?? 0) + 1;
    expect(byType).toEqual({ retraction: 2757, expression_of_concern: 165, correction: 68, reinstatement: 10 });
  });

  test('reasons lose their + prefix, dates are YYYY-MM-DD, the source is retraction-watch', async () => {
    const { out } = await importAll(Bun.file(SAMPLE).stream());
    for (const { update } of out) {
      expect(update.updateDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(update.source).toBe('retraction-watch');
      for (const r of update.reasons) expect(r.startsWith('+')).toBe(false);
    }
    expect(out.find((u) => u.doi === FRANKEN_DOI)!.update).toEqual(FRANKEN);
  });

  test('a record whose notice DOI is "unavailable" gives updateDoi null and no doi.org link', async () => {
    const { out } = await importAll(Bun.file(SAMPLE).stream());
    const u = out.find((x) => x.doi === '10.18384/2224-0209-2015-4-719')!.update;
    expect(u.updateDoi).toBeNull();
    expect(u.updateDate).toBe('2019-02-25');
    expect(u.urls.some((l) => l.includes('doi.org'))).toBe(false);
    // 28 rows say "unavailable", 14 say "None" (counted with Python csv)
    expect(out.filter((x) => x.update.updateDoi === null)).toHaveLength(42);
  });

  test('the same result whatever the chunk size (chunk boundaries inside quotes and UTF-8 characters)', async () => {
    const text = await Bun.file(SAMPLE).text();
    const whole = (await importAll(inChunks(text, 1 << 20))).out;
    const small = (await importAll(inChunks(text, 97))).out;
    expect(small).toEqual(whole);
  });
});

const HEADER =
  'Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes';

describe('format rules', () => {
  test('columns are found by name, not position, and a trailing empty column is tolerated', async () => {
    const csv =
      'Reason,RetractionNature,OriginalPaperDOI,RetractionDOI,RetractionDate,URLS,\n+Fake Peer Review;,Retraction,10.1000/abc,10.1000/notice,2021-03-04,https://rw.example/1;,\n';
    const { out, report } = await importAll(inChunks(csv, 5));
    expect(report.skipped).toEqual({});
    expect(out).toEqual([
      {
        doi: '10.1000/abc',
        update: {
          updateDoi: '10.1000/notice',
          source: 'retraction-watch',
          updateType: 'retraction',
          updateDate: '2021-03-04',
          reasons: ['Fake Peer Review'],
          urls: ['https://rw.example/1', 'https://doi.org/10.1000/notice'],
        },
      },
    ]);
  });

  test('quoted fields with commas, doubled quotes and line breaks; CRLF; a BOM', async () => {
    const row = `1,"A ""quoted"" title, with comma","Subj","Dept A;\r\nDept B;",J,P,C,Au,"https://a.example/x;",Research Article;,1/5/2020 0:00,10.2000/n1,0,,10.2000/w1,0,Expression of concern,"+Concerns/Issues About Data;+Investigation by Journal/Publisher;",No,"multi\r\nline, note"`;
    const csv = `\uFEFF${HEADER}\r\n${row}\r\n`;
    for (const size of [1, 7, 4096]) {
      const { out, report } = await importAll(inChunks(csv, size));
      expect(report.rows).toBe(1);
      expect(out[0]!.update).toMatchObject({
        updateType: 'expression_of_concern',
        updateDate: '2020-01-05',
        reasons: ['Concerns/Issues About Data', 'Investigation by Journal/Publisher'],
      });
    }
    const recs = [];
    for await (const r of csvRecords(inChunks(csv, 3))) recs.push(r);
    expect(recs[1]!.fields[1]).toBe('A "quoted" title, with comma');
    expect(recs[1]!.fields[3]).toBe('Dept A;\r\nDept B;');
    expect(recs[1]!.fields[19]).toBe('multi\r\nline, note');
  });

  test('unusable rows are counted and reported, never thrown', async () => {
    const rows = [
      `2,,,,,,,,,,1/1/2020 0:00,10.3000/n,0,,unavailable,0,Retraction,,No,`,
      `3,,,,,,,,,,1/1/2020 0:00,10.3000/n,0,,,0,Retraction,,No,`,
      `4,,,,,,,,,,13/45/2020 0:00,10.3000/n,0,,10.3000/w,0,Retraction,,No,`,
      `5,,,,,,,,,,1/1/2020 0:00,10.3000/n,0,,not-a-doi,0,Retraction,,No,`,
      `6,,,`,
      `7,,,,,,,,,,2/29/2020 0:00,Unavailable,0,,https://doi.org/10.3000/ok,0,Correction,+Error in Data;,No,`,
    ];
    const { out, report } = await importAll(inChunks(`${HEADER}\n${rows.join('\n')}`, 64));
    expect(report.rows).toBe(6);
    expect(report.skipped).toEqual({ NO_ORIGINAL_DOI: 2, BAD_DATE: 1, BAD_DOI: 1, SHORT_ROW: 1 });
    expect(report.firstSkipped.map((e) => e.line)).toEqual([2, 3, 4, 5, 6]);
    expect(out).toEqual([
      {
        doi: '10.3000/ok',
        recordId: '7',
        update: {
          updateDoi: null,
          source: 'retraction-watch',
          updateType: 'correction',
          updateDate: '2020-02-29',
          reasons: ['Error in Data'],
          urls: [],
        },
      },
    ]);
  });

  test('a file without the Retraction Watch columns is refused with the missing column names', async () => {
    const run = importAll(inChunks('a,b,c\n1,2,3\n', 10));
    await expect(run).rejects.toBeInstanceOf(FaultError);
    await expect(importAll(inChunks('a,b,c\n1,2,3\n', 10))).rejects.toMatchObject({ code: 'RW_MISSING_COLUMN' });
    await expect(importAll(inChunks('a,b,c\n', 10))).rejects.toThrow(
      /no OriginalPaperDOI, RetractionDOI, RetractionDate, RetractionNature, Reason, URLS columns/,
    );
  });
});
