import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { FAULT_CODES } from '../../src/base/fault.ts';
import type { App } from '../../src/http/index.ts';
import { Store } from '../../src/store/index.ts';
import {
  type CsvRecord,
  csvRecords,
  importUpdates,
  newReport,
  readRetractionWatch,
  type UpdateObject,
  updateIdentity,
  type WorkUpdate,
} from '../../src/updates/index.ts';
import { makeApp, post } from '../http/http-support.ts';
import { tempDir } from '../support/fixtures.ts';
import { apiDoi, awkwardString, chunksOf, doiForms, fuzz, keyOf, streamOf, validDoi } from './fuzz-support.ts';

/**
 * Property-based fuzzing of the Retraction Watch CSV reader (docs/interface.md, "Where update information comes
 * from"; docs/design.md, "Update information"; docs/reliability.md). The RFC 4180 reader gives back any table
 * written in any legal way (quoted or not, LF, CRLF or CR, a BOM, split into chunks anywhere); any text at all
 * reads the same whole or in chunks and never throws; every Retraction Watch row is used or skipped with the code
 * a model of the interface predicts, and the used rows are what the Updates API then serves.
 */

const encoder = new TextEncoder();
const ROW_CODES: readonly string[] = FAULT_CODES.updateRow;

async function recordsOf(chunks: AsyncIterable<Uint8Array | string>): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  for await (const r of csvRecords(chunks)) out.push(r);
  return out;
}

// ---- writing CSV: every legal way, and what a reader must make of it ----

/** How a table is written: which fields are quoted (beyond those that must be), the line ends, a BOM, a last line end. */
interface Layout {
  quoteAll: boolean;
  quoteSome: number;
  ends: string[];
  bom: boolean;
  finalEnd: boolean;
}
const layoutArb: fc.Arbitrary<Layout> = fc.record({
  quoteAll: fc.boolean(),
  quoteSome: fc.nat(),
  ends: fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 1, maxLength: 4 }),
  bom: fc.boolean(),
  finalEnd: fc.boolean(),
});

/**
 * The table as CSV text, and the records a reader must give back: a field with `,`, `"`, CR or LF is quoted
 * (`""` for a quote); a row of one empty field is written `""` (an empty line is blank, not a record); a first
 * field starting with U+FEFF gets a BOM before it (else it would be read as one). Line numbers count LFs and
 * record ends before the record.
 */
function writeCsv(rows: string[][], layout: Layout): { text: string; records: CsvRecord[] } {
  let text = '';
  let line = 1;
  let k = 0;
  const records: CsvRecord[] = [];
  rows.forEach((fields, r) => {
    records.push({ fields, line });
    const cells = fields.map((f, c) => {
      const must =
        /[,"\r\n]/.test(f) ||
        (fields.length === 1 && f === '') ||
        (r === 0 && c === 0 && f.startsWith('\ufeff') && !layout.bom);
      const quoted = must || layout.quoteAll || (layout.quoteSome >> (k++ % 30)) % 2 === 1;
      line += f.split('\n').length - 1;
      return quoted ? `"${f.replace(/"/g, '""')}"` : f;
    });
    text += cells.join(',');
    line++;
    if (r < rows.length - 1 || layout.finalEnd) text += layout.ends[r % layout.ends.length];
  });
  return { text: (layout.bom ? '\ufeff' : '') + text, records };
}

/** CSV-troubling field text: separators, quotes, line ends, a BOM, non-ASCII, lone surrogates. */
const fieldArb = fc.oneof(
  { weight: 3, arbitrary: awkwardString(10, { lone: true }) },
  fc.constantFrom('', ',', '"', '""', '\r', '\n', '\r\n', '\ufeff', '\ufeffx', ' a , b ', '"quoted"'),
);
function stringChunks(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  return [...at, text.length].map((c, i) => text.slice(i === 0 ? 0 : at[i - 1], c));
}

const tableArb = fc.array(fc.array(fieldArb, { minLength: 1, maxLength: 6 }), { maxLength: 12 });
const cutsArb = fc.array(fc.nat(), { maxLength: 8 });

describe('the RFC 4180 reader', () => {
  test('any table, written any legal way and split anywhere, reads back as it was written', async () => {
    await fuzz(
      'csv table round trip',
      1500,
      fc.asyncProperty(tableArb, layoutArb, cutsArb, async (rows, layout, cuts) => {
        const { text, records } = writeCsv(rows, layout);
        // as bytes, split anywhere (inside characters, between CR and LF, between two quotes): UTF-8 carries
        // well-formed text only, so a lone surrogate is written and read as U+FFFD
        const fromBytes = await recordsOf(streamOf(chunksOf(encoder.encode(text), cuts)));
        expect(fromBytes).toEqual(records.map((r) => ({ ...r, fields: r.fields.map((f) => f.toWellFormed()) })));
        // as strings, split at the same places (a surrogate pair may be split too)
        expect(await recordsOf(streamOf(stringChunks(text, cuts)))).toEqual(records);
      }),
    );
  });

  test('any text: never throws, and reads the same whole, in byte chunks and in string chunks', async () => {
    const textArb = fc.string({
      unit: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(',', '"', '\r', '\n', 'a', ' ', '\ufeff') },
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
      maxLength: 60,
    });
    await fuzz(
      'csv any text',
      2000,
      fc.asyncProperty(textArb, cutsArb, async (text, cuts) => {
        const whole = await recordsOf(streamOf([text]));
        for (const r of whole) {
          expect(r.fields.length).toBeGreaterThan(0);
          expect(r.line).toBeGreaterThanOrEqual(1);
        }
        expect(await recordsOf(streamOf(chunksOf(encoder.encode(text), cuts)))).toEqual(whole);
        expect(await recordsOf(streamOf(stringChunks(text, cuts)))).toEqual(whole);
      }),
    );
  });
});

describe('counterexamples the properties found', () => {
  // the table round trip: bytes starting with a BOM and then U+FEFF lost both (the decoder dropped one, the
  // reader another), while the same text as a string lost one
  test('one BOM is dropped, bytes or string, and a field starting with U+FEFF keeps it', async () => {
    const text = '\ufeff\ufeff,\r\n';
    const want = [{ fields: ['\ufeff', ''], line: 1 }];
    expect(await recordsOf(streamOf([encoder.encode(text)]))).toEqual(want);
    expect(await recordsOf(streamOf([text]))).toEqual(want);
    expect(await recordsOf(streamOf(chunksOf(encoder.encode(text), [1, 2, 4])))).toEqual(want);
    expect(await recordsOf(streamOf([encoder.encode('\ufeffa,b')]))).toEqual([{ fields: ['a', 'b'], line: 1 }]);
  });
});

// ---- Retraction Watch rows: a model of each column's rule ----

const REQUIRED = ['OriginalPaperDOI', 'RetractionDOI', 'RetractionDate', 'RetractionNature', 'Reason', 'URLS'] as const;
/** what "empty, unavailable or similar" means for a DOI column (docs/interface.md) */
const NO_DOI = ['', 'unavailable', 'Unavailable', ' none ', 'N/A', 'na', 'Not Available'];

/** A date as Retraction Watch or ISO writes it, with the update date it must give (undefined: not a date). */
const dateArb: fc.Arbitrary<[string, string | undefined]> = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 1000, max: 9999 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 31 }),
      fc.constantFrom('', ' 0:00', ' 13:45', ' 9:05:59'),
      fc.boolean(),
    )
    .map(([y, m, d, time, iso]): [string, string | undefined] => {
      const real = new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d; // no 31 June, no 29 February outside leap years
      const want = real ? `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}` : undefined;
      return [
        iso
          ? `${want ?? `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`}${time ? `T${time.trim().padStart(5, '0')}Z` : ''}`
          : `${m}/${d}/${y}${time}`,
        want,
      ];
    }),
  fc.integer({ min: 1000, max: 9999 }).map((y): [string, string] => [` ${y} `, String(y)]),
  fc
    .tuple(fc.integer({ min: 1000, max: 9999 }), fc.integer({ min: 1, max: 12 }))
    .map(([y, m]): [string, string] => [`${y}-${String(m).padStart(2, '0')}`, `${y}-${String(m).padStart(2, '0')}`]),
  fc.constantFrom<[string, undefined]>(
    ['', undefined],
    ['13/1/2020 0:00', undefined],
    ['0/1/2020', undefined],
    ['2/30/2020', undefined],
    ['2/29/2021 0:00', undefined],
    ['1/1/999', undefined],
    ['0999', undefined],
    ['2020-13', undefined],
    ['2020-1-5', undefined],
    ['2020/01/05', undefined],
    ['yesterday', undefined],
    ['1/1/20', undefined],
    ['１/１/２０２０', undefined],
  ),
);

const NATURES: [string, string | undefined][] = [
  ['Retraction', 'retraction'],
  ['Correction', 'correction'],
  ['Expression of concern', 'expression_of_concern'],
  ['Reinstatement', 'reinstatement'],
  [' RETRACTION ', 'retraction'],
  ['Expression of Concern', 'expression_of_concern'],
  ['', undefined],
  ['   ', undefined],
  ['!!!', undefined],
];

/** A list column: items without `;` (a trailing `;` as Retraction Watch writes), and the items it must give. */
const listArb = (prefix: string) =>
  fc
    .tuple(fc.array(fc.stringMatching(/^[A-Za-z0-9 ,/"()é:.\n-]{0,16}$/), { maxLength: 4 }), fc.boolean())
    .map(([items, trailing]): [string, string[]] => [
      items.map((i) => prefix + i).join(';') + (trailing ? ';' : ''),
      // reasons lose their `+` (and the spaces after it); links are kept whole; each is trimmed, empty ones dropped
      items.map((i) => (prefix === '+' ? i.trim() : (prefix + i).trim())).filter((i) => i !== ''),
    ]);

interface RwRow {
  original: string;
  notice: string;
  date: [string, string | undefined];
  nature: [string, string | undefined];
  reasons: [string, string[]];
  urls: [string, string[]];
  extra: string[];
  /** fields dropped from the end (a short row) or added (a long one) */
  width: number;
}

/** DOIs from a small pool (so that rows share works and repeat updates), in every form, or anything else. */
const rwDoiArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 9 }), fc.constantFrom('', 'doi:', 'https://doi.org/', ' '), fc.boolean())
      .map(([n, pre, up]) => `${pre}10.5555/W.${up ? 'X' : 'x'}${n}`),
  },
  { weight: 2, arbitrary: validDoi() },
  { weight: 2, arbitrary: doiForms() },
  fc.constantFrom(...NO_DOI),
);

const rwRowArb: fc.Arbitrary<RwRow> = fc.record({
  original: rwDoiArb,
  notice: fc.oneof(rwDoiArb, fc.constant('10.5555/notice')),
  date: dateArb,
  nature: fc.constantFrom(...NATURES),
  reasons: listArb('+'),
  urls: listArb('https://rw.example/'),
  extra: fc.array(awkwardString(6), { maxLength: 3 }),
  width: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, fc.integer({ min: -8, max: 2 })),
});

/** A header: the six columns (some padded with spaces), others, in any order. */
const headerArb = fc
  .tuple(
    fc.array(fc.constantFrom('Record ID', 'Title', 'Notes', 'Paywalled', ''), { maxLength: 3 }),
    fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  )
  .chain(([others, padded]) => {
    const names = [...REQUIRED.map((r, i) => (padded[i] ? ` ${r} ` : r)), ...others];
    return fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length });
  });

interface Expectation {
  updates: WorkUpdate[];
  skipped: { line: number; code: string }[];
}

/** What the interface says of each row; `lines` are the rows' line numbers. */
function modelRows(header: string[], rows: RwRow[], lines: number[]): Expectation {
  const names = header.map((h) => h.trim());
  const width = Math.max(...REQUIRED.map((r) => names.indexOf(r))) + 1;
  const out: Expectation = { updates: [], skipped: [] };
  rows.forEach((r, i) => {
    // the file is UTF-8: a lone surrogate in a generated value is read as U+FFFD
    const row = { ...r, original: r.original.toWellFormed(), notice: r.notice.toWellFormed() };
    const line = lines[i]!;
    const fields = fieldsOf(header, row);
    if (fields.length < width) return out.skipped.push({ line, code: 'SHORT_ROW' });
    if (NO_DOI.some((n) => n.trim().toLowerCase() === row.original.trim().toLowerCase()))
      return out.skipped.push({ line, code: 'NO_ORIGINAL_DOI' });
    const doi = apiDoi(row.original);
    if (doi === undefined) return out.skipped.push({ line, code: 'BAD_DOI' });
    if (row.date[1] === undefined) return out.skipped.push({ line, code: 'BAD_DATE' });
    if (row.nature[1] === undefined) return out.skipped.push({ line, code: 'NO_UPDATE_TYPE' });
    const updateDoi = apiDoi(row.notice) ?? null;
    const urls = [...new Set([...row.urls[1], ...(updateDoi ? [`https://doi.org/${updateDoi}`] : [])])];
    // the Record ID column is optional; its trimmed value, when there is one, rides with the row (never served)
    const recordCol = names.indexOf('Record ID');
    const recordId = recordCol >= 0 ? fields[recordCol]?.toWellFormed().trim() : undefined;
    out.updates.push({
      doi,
      ...(recordId ? { recordId } : {}),
      update: {
        updateDoi,
        source: 'retraction-watch',
        updateType: row.nature[1],
        updateDate: row.date[1],
        reasons: row.reasons[1],
        urls,
      },
    });
  });
  return out;
}

/** The row's fields in the header's order, cut short or lengthened by `width`. */
function fieldsOf(header: string[], row: RwRow): string[] {
  let extra = 0;
  const value: Record<string, string> = {
    OriginalPaperDOI: row.original,
    RetractionDOI: row.notice,
    RetractionDate: row.date[0],
    RetractionNature: row.nature[0],
    Reason: row.reasons[0],
    URLS: row.urls[0],
  };
  const fields = header.map((h) => value[h.trim()] ?? row.extra[extra++ % Math.max(1, row.extra.length)] ?? '');
  if (row.width < 0) return fields.slice(0, Math.max(1, fields.length + row.width));
  return [...fields, ...Array.from({ length: row.width }, () => 'more')];
}

/** The served list of each work: one update per identity (the later row wins), oldest first. */
function served(updates: WorkUpdate[]): Map<string, UpdateObject[]> {
  const byWork = new Map<string, Map<string, UpdateObject>>();
  for (const { doi, update } of updates) {
    const w = byWork.get(keyOf(doi)) ?? new Map<string, UpdateObject>();
    byWork.set(keyOf(doi), w);
    w.set(updateIdentity(update), update);
  }
  const order = (a: UpdateObject, b: UpdateObject) =>
    a.updateDate < b.updateDate ? -1 : a.updateDate > b.updateDate ? 1 : updateIdentity(a) < updateIdentity(b) ? -1 : 1;
  return new Map([...byWork].map(([k, w]) => [k, [...w.values()].sort(order)]));
}

const rwFileArb = fc.tuple(headerArb, fc.array(rwRowArb, { maxLength: 40 }), layoutArb, cutsArb);

function rwCsv(header: string[], rows: RwRow[], layout: Layout): { bytes: Uint8Array; want: Expectation } {
  const { text, records } = writeCsv([header, ...rows.map((r) => fieldsOf(header, r))], layout);
  return {
    bytes: encoder.encode(text),
    want: modelRows(
      header,
      rows,
      records.slice(1).map((r) => r.line),
    ),
  };
}

describe('Retraction Watch rows', () => {
  test('every row is used or skipped with the code the model predicts; never a throw', async () => {
    const seen: Record<string, number> = {};
    await fuzz(
      'rw rows',
      600,
      fc.asyncProperty(rwFileArb, async ([header, rows, layout, cuts]) => {
        const { bytes, want } = rwCsv(header, rows, layout);
        seen.used = (seen.used ?? 0) + want.updates.length;
        for (const s of want.skipped) seen[s.code] = (seen[s.code] ?? 0) + 1;
        const report = newReport();
        const got: WorkUpdate[] = [];
        for await (const u of readRetractionWatch(streamOf(chunksOf(bytes, cuts)), report)) got.push(u);
        expect(got).toEqual(want.updates);
        expect(report.rows).toBe(rows.length);
        expect(report.used).toBe(want.updates.length);
        const counts: Record<string, number> = {};
        for (const s of want.skipped) counts[s.code] = (counts[s.code] ?? 0) + 1;
        expect(report.skipped).toEqual(counts);
        expect(
          report.firstSkipped.map((e): { line: number; code: string } => ({ line: e.line, code: e.code })),
        ).toEqual(want.skipped.slice(0, 20));
        for (const e of report.firstSkipped) {
          expect(ROW_CODES).toContain(e.code);
          expect(e.message.length).toBeGreaterThan(0);
        }
      }),
    );
    console.log('  rows:', JSON.stringify(seen));
  });

  describe('through the import and the Updates API', () => {
    let dir: ReturnType<typeof tempDir>;
    let store: Store;
    let app: App;
    beforeAll(() => {
      dir = tempDir('doi-holdings-fuzz-csv-');
      store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
      app = makeApp({ production: { store } });
    });
    afterAll(async () => {
      await store?.close();
      dir?.remove();
    });

    test('each import replaces the feed: the API serves exactly the used rows of the last file, for every DOI asked', async () => {
      let previous: string[] = [];
      let served_ = 0;
      await fuzz(
        'rw import round trip',
        60,
        fc.asyncProperty(rwFileArb, async ([header, rows, layout, cuts]) => {
          const { bytes, want } = rwCsv(header, rows, layout);
          const result = await importUpdates([store], 'retraction-watch-csv', streamOf(chunksOf(bytes, cuts)));
          if ('code' in result) throw new Error(`${result.code}: ${result.message}`);
          expect(result.parsed.report.used).toBe(want.updates.length);
          store.updatesIndex.refresh(true);
          const works = served(want.updates);
          // this file's works, in the spelling of their first row, and the previous file's (gone unless named again)
          const asked = [...new Set([...want.updates.map((u) => u.doi), ...previous])];
          previous = [...works.keys()];
          for (let i = 0; i < asked.length; i += 100) {
            const dois = asked.slice(i, i + 100);
            const r = await post(app, '/v2.2/updates', JSON.stringify({ dois }));
            expect(r.status).toBe(200);
            const docs = (
              (await r.json()) as { documents: { doi: string; statusCode: number; updates: UpdateObject[] }[] }
            ).documents;
            expect(docs).toEqual(dois.map((doi) => ({ doi, statusCode: 200, updates: works.get(keyOf(doi)) ?? [] })));
            served_ += docs.filter((d) => d.updates.length > 0).length;
          }
        }),
      );
      console.log(`  works served with updates: ${served_}`);
      expect(served_).toBeGreaterThan(0);
    });
  });
});
