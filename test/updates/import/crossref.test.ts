import { describe, expect, test } from 'bun:test';
import { type ImportRow, newReport, readCrossref, type WorkUpdate } from '../../../src/updates/index.ts';

async function importJson(text: string, chunk = 13) {
  const report = newReport();
  const out: WorkUpdate[] = [];
  const rows: ImportRow[] = [];
  async function* chunks() {
    const b = Buffer.from(text);
    for (let i = 0; i < b.length; i += chunk) yield b.subarray(i, i + chunk);
  }
  for await (const r of readCrossref(chunks(), report)) {
    rows.push(r);
    if (r.update) out.push({ doi: r.doi, update: r.update });
  }
  return { out, rows, report };
}

const notice = {
  DOI: '10.1016/j.notice.2020.01',
  'update-to': [
    {
      DOI: '10.1016/J.WORK.2018.05',
      type: 'retraction',
      label: 'Retraction',
      source: 'publisher',
      updated: { 'date-parts': [[2020, 4, 15]] },
      'record-id': 'x',
    },
  ],
};

describe('Crossref works JSON', () => {
  test('a notice with update-to attaches an update to the target work, from the REST message shape', async () => {
    const { out, report } = await importJson(JSON.stringify({ status: 'ok', 'message-type': 'work', message: notice }));
    expect(report).toMatchObject({ rows: 1, used: 1, skipped: {} });
    expect(out).toEqual([
      {
        doi: '10.1016/J.WORK.2018.05',
        update: {
          updateDoi: '10.1016/j.notice.2020.01',
          source: 'crossref',
          updateType: 'retraction',
          updateDate: '2020-04-15',
          reasons: [],
          urls: ['https://doi.org/10.1016/j.notice.2020.01'],
        },
      },
    ]);
  });

  test('updated-by on a work attaches to the work itself; partial date-parts keep their precision', async () => {
    const work = {
      DOI: '10.5555/work.1',
      'updated-by': [
        { DOI: '10.5555/corr.1', type: 'correction', source: 'publisher', updated: { 'date-parts': [[2018, 4]] } },
        {
          DOI: '10.5555/eoc.1',
          type: 'expression_of_concern',
          source: 'publisher',
          updated: { 'date-parts': [[2019]] },
        },
      ],
    };
    const { out } = await importJson(JSON.stringify({ message: { items: [work] } }));
    expect(out.map((u) => [u.doi, u.update.updateDoi, u.update.updateType, u.update.updateDate])).toEqual([
      ['10.5555/work.1', '10.5555/corr.1', 'correction', '2018-04'],
      ['10.5555/work.1', '10.5555/eoc.1', 'expression_of_concern', '2019'],
    ]);
  });

  test('entries with source "retraction-watch" are retraction-watch updates', async () => {
    const work = {
      DOI: '10.5555/w2',
      'updated-by': [
        {
          DOI: '10.5555/n2',
          type: 'Retraction',
          source: 'retraction-watch',
          updated: { 'date-parts': [[2021, 1, 2]] },
        },
      ],
    };
    const { out } = await importJson(JSON.stringify(work));
    expect(out[0]!.update).toMatchObject({
      source: 'retraction-watch',
      updateType: 'retraction',
      updateDate: '2021-01-02',
    });
  });

  test('JSON lines, an array of works and an items list give the same updates', async () => {
    const w1 = {
      DOI: '10.5555/a',
      'updated-by': [{ DOI: '10.5555/na', type: 'erratum', updated: { 'date-parts': [[2017, 3, 1]] } }],
    };
    const w2 = notice;
    const lines = (await importJson(`${JSON.stringify(w1)}\n${JSON.stringify(w2)}\n`)).out;
    const array = (await importJson(JSON.stringify([w1, w2]))).out;
    const items = (await importJson(JSON.stringify({ message: { items: [w1, w2] } }))).out;
    expect(lines).toHaveLength(2);
    expect(array).toEqual(lines);
    expect(items).toEqual(lines);
  });

  test('entries without a usable date or type, and bad JSON lines, are counted and reported', async () => {
    const bad = {
      DOI: '10.5555/b',
      'updated-by': [
        { DOI: '10.5555/nb', type: 'retraction', updated: {} },
        { DOI: '10.5555/nc', updated: { 'date-parts': [[2020]] } },
      ],
    };
    const { out, report } = await importJson(`${JSON.stringify(bad)}\n{not json\n`);
    expect(out).toEqual([]);
    expect(report.skipped).toEqual({ BAD_DATE: 1, NO_UPDATE_TYPE: 1, INVALID_JSON: 1 });
  });
});
