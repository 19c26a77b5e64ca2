import { describe, expect, test } from 'bun:test';
import { documentStatus } from '../../src/history/index.ts';
import { readUpdates, type UpdateObject } from '../../src/updates/index.ts';
import { SAMPLE_PATH } from '../support/rw-sample.ts';

/** The status badge rule (src/history/document-status.ts) and the harms it must avoid. */

function notice(updateType: string, updateDate: string, reasons: string[] = []): UpdateObject {
  return {
    updateDoi: `10.9/${updateType}.${updateDate}`,
    source: 'retraction-watch',
    updateType,
    updateDate,
    reasons,
    urls: [],
  };
}
const code = (...ns: UpdateObject[]) => documentStatus(ns).code;

describe('the badge', () => {
  test('one notice of each decisive type gives its badge; none gives "No known updates"', () => {
    expect(documentStatus([])).toEqual({ code: 'none', label: 'No known updates', tone: 'neutral' });
    expect(documentStatus([notice('retraction', '2020-01-02')])).toEqual({
      code: 'retracted',
      label: 'Retracted',
      tone: 'alert',
      date: '2020-01-02',
      source: 'retraction-watch',
    });
    expect(code(notice('correction', '2020'))).toBe('corrected');
    expect(code(notice('erratum', '2020'))).toBe('corrected');
    expect(code(notice('corrigendum', '2020'))).toBe('corrected');
    expect(code(notice('expression_of_concern', '2020'))).toBe('expression_of_concern');
    expect(code(notice('withdrawal', '2020'))).toBe('withdrawn');
    expect(code(notice('removal', '2020'))).toBe('withdrawn');
    expect(code(notice('partial_retraction', '2020'))).toBe('partial_retraction');
    expect(code(notice('reinstatement', '2020'))).toBe('reinstated');
  });

  test('notices that decide nothing give "Updated", dated by the latest of them', () => {
    expect(documentStatus([notice('addendum', '2019-05'), notice('new_version', '2021-01-01')])).toMatchObject({
      code: 'updated',
      label: 'Updated',
      date: '2021-01-01',
    });
  });

  test('a correction is never shown as a retraction, and never hides one', () => {
    expect(code(notice('correction', '2020-01-01'), notice('correction', '2021-01-01'))).toBe('corrected');
    // a correction of the retraction notice published later: still retracted
    expect(code(notice('retraction', '2020-01-01'), notice('correction', '2021-01-01'))).toBe('retracted');
    expect(
      code(notice('correction', '2018-09-21', ['Updated to Retraction']), notice('retraction', '2023-11-14')),
    ).toBe('retracted');
    expect(code(notice('retraction', '2020-01-01'), notice('expression_of_concern', '2021-01-01'))).toBe('retracted');
  });

  test('a reversed retraction is not "Retracted": reinstatement, retract-and-replace', () => {
    expect(documentStatus([notice('retraction', '2016-03-01'), notice('reinstatement', '2016-10-04')])).toMatchObject({
      code: 'reinstated',
      label: 'Reinstated',
      date: '2016-10-04',
    });
    expect(code(notice('retraction', '2016-03-01', ['Retract and Replace', 'Error in Text']))).toBe('replaced');
    expect(code(notice('retraction', '2010-01-01'), notice('retraction', '2016-03-01', ['Retract and Replace']))).toBe(
      'replaced',
    );
    expect(code(notice('withdrawal', '2018-01-01'), notice('reinstatement', '2018-07-19'))).toBe('reinstated');
  });

  test('a correction after a retract-and-replace leaves it "Replaced" (above Corrected in the table); a concern after it moves it', () => {
    expect(code(notice('retraction', '2016-03-01', ['Retract and Replace']), notice('correction', '2017-01-01'))).toBe(
      'replaced',
    );
    expect(
      code(notice('retraction', '2016-03-01', ['Retract and Replace']), notice('expression_of_concern', '2017-01-01')),
    ).toBe('expression_of_concern');
    // a reinstatement sits below Corrected: a later correction is shown
    expect(
      code(
        notice('retraction', '2016-01-01'),
        notice('reinstatement', '2017-01-01'),
        notice('correction', '2018-01-01'),
      ),
    ).toBe('corrected');
  });

  test('a retraction after a reinstatement or a replacement is a retraction again', () => {
    expect(
      code(
        notice('retraction', '2016-01-01'),
        notice('reinstatement', '2017-01-01'),
        notice('retraction', '2020-01-01'),
      ),
    ).toBe('retracted');
    expect(code(notice('retraction', '2016-01-01', ['Retract and Replace']), notice('retraction', '2020-01-01'))).toBe(
      'retracted',
    );
  });

  test('the order notices arrive in does not matter; on one date the retraction outranks the concern and the reinstatement comes last', () => {
    expect(code(notice('correction', '2021-01-01'), notice('retraction', '2020-01-01'))).toBe('retracted');
    expect(code(notice('retraction', '2016-03-01'), notice('expression_of_concern', '2016-03-01'))).toBe('retracted');
    expect(code(notice('expression_of_concern', '2016-03-01'), notice('retraction', '2016-03-01'))).toBe('retracted');
    expect(code(notice('reinstatement', '2016-03-01'), notice('retraction', '2016-03-01'))).toBe('reinstated');
    expect(code(notice('expression_of_concern', '2021-09-28'), notice('retraction', '2021-11-22'))).toBe('retracted');
    expect(code(notice('expression_of_concern', '2021-09-28'), notice('correction', '2022-01-01'))).toBe(
      'expression_of_concern',
    );
  });
});

describe('notices from several sources and at several precisions', () => {
  test('dates of other precision are one date when one is within the other: the reinstatement still comes last', () => {
    expect(code(notice('retraction', '2020-05-14'), notice('reinstatement', '2020-05'))).toBe('reinstated');
    expect(code(notice('reinstatement', '2020'), notice('retraction', '2020-11-30'))).toBe('reinstated');
    expect(code(notice('reinstatement', '2019'), notice('retraction', '2020-01-01'))).toBe('retracted');
  });

  test("another source's copy of a retract-and-replace notice (no reasons) reads as the replacement too", () => {
    const rw: UpdateObject = {
      ...notice('retraction', '2020-05-01', ['Retract and Replace']),
      updateDoi: '10.9/Notice.1',
    };
    const crossref: UpdateObject = {
      ...notice('retraction', '2020-05-03'),
      source: 'crossref',
      updateDoi: '10.9/notice.1',
    };
    expect(code(rw, crossref)).toBe('replaced');
    expect(code(crossref, { ...rw, updateDate: '2020-05-05' })).toBe('replaced');
    // a retraction with another notice DOI is a retraction
    expect(code(rw, { ...crossref, updateDoi: '10.9/other', updateDate: '2021-01-01' })).toBe('retracted');
  });
});

describe('over the real Retraction Watch sample', async () => {
  const { works } = await readUpdates(
    'retraction-watch-csv',
    Bun.file(SAMPLE_PATH).stream() as unknown as AsyncIterable<Uint8Array>,
  );
  const statuses = [...works].map(([doi, w]) => ({
    doi,
    natures: new Set(w.updates.map((u) => u.updateType)),
    status: documentStatus(w.updates),
  }));

  test('no work whose notices are only corrections or concerns is shown as retracted', () => {
    const mild = statuses.filter((s) =>
      [...s.natures].every((n) => n === 'correction' || n === 'expression_of_concern'),
    );
    expect(mild.length).toBeGreaterThan(200);
    for (const s of mild) expect(s.status.code).not.toBe('retracted');
  });

  test('every reinstated work is shown as reinstated, and no retract-and-replace as retracted', () => {
    const reinstated = statuses.filter((s) => s.natures.has('reinstatement'));
    expect(reinstated.length).toBe(10);
    for (const s of reinstated) expect(s.status.code).toBe('reinstated');
    const replaced = [...works].filter(([, w]) =>
      w.updates.some((u) => u.updateType === 'retraction' && u.reasons.includes('Retract and Replace')),
    );
    expect(replaced.length).toBeGreaterThan(20);
    for (const [, w] of replaced) expect(documentStatus(w.updates).code).not.toBe('retracted');
  });

  test('a plain retraction in the sample is shown as retracted', () => {
    const plain = [...works].filter(
      ([, w]) =>
        w.updates.length === 1 &&
        w.updates[0]!.updateType === 'retraction' &&
        !w.updates[0]!.reasons.includes('Retract and Replace'),
    );
    expect(plain.length).toBeGreaterThan(2000);
    for (const [, w] of plain) expect(documentStatus(w.updates).code).toBe('retracted');
  });
});
