import { describe, expect, test } from 'bun:test';
import {
  accepts,
  exactTitle,
  familyName,
  latest,
  metadataProblem,
  normaliseTitle,
  queryForms,
} from '../../../src/entitlement/lookup/index.ts';
import { LookupCache } from '../../../src/entitlement/lookup/lookup-cache.ts';

/** The rules of a metadata match (src/entitlement/lookup/match.ts, titles.ts) and the lookup cache, as units. */

describe('titles', () => {
  test('normalised: markup and character references set aside, NFKC, lower case, punctuation and spaces as one', () => {
    expect(normaliseTitle('  Growth of <i>E. coli</i> in H<sub>2</sub>O &amp; Saline ')).toBe(
      'growth of e coli in h2o saline',
    );
    expect(normaliseTitle('Eﬀects of Vitamin C — a “Trial”')).toBe('effects of vitamin c a trial'); // ﬀ ligature
    expect(normaliseTitle('Ｆｕｌｌ　ｗｉｄｔｈ')).toBe('full width');
    expect(normaliseTitle('Caf\u0065\u0301')).toBe(normaliseTitle('Caf\u00e9'));
    expect(normaliseTitle('&#x3b1;-helix &#946;')).toBe('α helix β');
    expect(normaliseTitle('?!')).toBe('');
  });

  test('exact: letter case and punctuation kept; markup, references and runs of whitespace set aside', () => {
    expect(exactTitle(' Growth of <i>E. coli</i>\n in H<sub>2</sub>O &amp; Saline')).toBe(
      'Growth of E. coli in H2O & Saline',
    );
    expect(exactTitle('A Title')).not.toBe(exactTitle('A title'));
    expect(exactTitle('Caf\u0065\u0301')).toBe(exactTitle('Caf\u00e9'));
  });

  test('an author as "Given Family" or "Family, Given": the family name, normalised', () => {
    expect(familyName('Jane Doe')).toBe('doe');
    expect(familyName('Doe, Jane')).toBe('doe');
    expect(familyName('  Ana  García ')).toBe('garcía');
  });
});

describe('what a candidate must agree with', () => {
  const item = {
    DOI: '10.5555/x',
    type: 'journal-article',
    title: ['The <i>Title</i>'],
    'container-title': ['Journal of Things'],
    author: [{ given: 'Jane', family: 'Doe' }, { name: 'The Consortium' }],
    issued: { 'date-parts': [[2021, 3]] },
  };
  const ok = (q: Parameters<typeof queryForms>[0]) => accepts(queryForms(q), item);

  test('title, then journal, authors, year and type, each only when given', () => {
    expect(ok({ title: 'the title' })).toBe(true);
    expect(ok({ title: 'the titles' })).toBe(false);
    expect(ok({ title: 'the title', exactTitleMatch: true })).toBe(false);
    expect(ok({ title: 'The Title', exactTitleMatch: true })).toBe(true);
    expect(ok({ title: 'the title', journal: 'JOURNAL OF THINGS' })).toBe(true);
    expect(ok({ title: 'the title', journal: 'Journal of Other Things' })).toBe(false);
    expect(ok({ title: 'the title', authors: ['Alan Smith', 'J. Doe'] })).toBe(true);
    expect(ok({ title: 'the title', authors: ['The Consortium'] })).toBe(true);
    expect(ok({ title: 'the title', authors: ['Alan Smith'] })).toBe(false);
    expect(ok({ title: 'the title', year: 2021 })).toBe(true);
    expect(ok({ title: 'the title', year: 2020 })).toBe(true); // published the year given or later
    expect(ok({ title: 'the title', year: 2022 })).toBe(false);
    expect(ok({ title: 'the title', preprintDoi: '10.5555/X' })).toBe(false); // the preprint itself
    expect(accepts(queryForms({ title: 'the title' }), { ...item, type: 'posted-content' })).toBe(false);
  });

  test('the latest issued version; a missing month or day is earlier; a tie goes to the smallest DOI key', () => {
    const at = (DOI: string, parts: number[]) => ({ DOI, issued: { 'date-parts': [parts] } });
    expect(latest([at('10.1/a', [2020, 5]), at('10.1/b', [2021]), at('10.1/c', [2020, 12, 31])])).toBe('10.1/b');
    expect(latest([at('10.1/b', [2021, 1]), at('10.1/a', [2021])])).toBe('10.1/b');
    expect(latest([at('10.1/B', [2021, 1, 1]), at('10.1/a', [2021, 1, 1])])).toBe('10.1/a');
    expect(latest([at('10.1/a', [2021, 1, 1]), at('10.1/B', [2021, 1, 1])])).toBe('10.1/a');
    expect(latest([])).toBeUndefined();
  });

  test('an entry that cannot be looked up says why', () => {
    expect(metadataProblem({ journal: 'J' })).toBe(
      'an entry without doi is looked up by its metadata, and needs a title or a preprintDoi',
    );
    expect(metadataProblem({ title: '...' })).toBe('title: has no letter or digit to match a title by');
    expect(metadataProblem({ preprintDoi: 'no' })).toStartWith('preprintDoi: ');
    expect(metadataProblem({ preprintDoi: 'doi:10.1101/x' })).toBeUndefined();
  });
});

test('the lookup cache: bounded by count, the least recently used out; 0 keeps nothing', () => {
  const cache = new LookupCache(2);
  cache.set('a', '10.1/a');
  cache.set('b', '10.1/b');
  expect(cache.get('a')).toBe('10.1/a'); // a is now the most recent
  cache.set('c', '10.1/c');
  expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size]).toEqual(['10.1/a', undefined, '10.1/c', 2]);
  const none = new LookupCache(0);
  none.set('a', '10.1/a');
  expect(none.get('a')).toBeUndefined();
});
