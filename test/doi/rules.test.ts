import { describe, expect, test } from 'bun:test';
import { doiKey, doiProblem, MAX_DOI_BYTES, readDoiForm } from '../../src/doi/index.ts';

/** docs/interface.md, "Depositing holdings": `10.` + 4-9 ASCII digit registrant + `/` + non-empty suffix; no Z/Cc/Cf; no lone surrogates; <= 1,024 UTF-8 bytes. */

describe('doiProblem: valid DOIs', () => {
  test.each([
    ['4-digit registrant', '10.1234/abc'],
    ['9-digit registrant', '10.123456789/abc'],
    ['one-character suffix', '10.1234/x'],
    [
      'suffix with slashes, dots, brackets and semicolons',
      '10.1002/(SICI)1097-4636(199706)35:4<447::AID-JBM5>3.0.CO;2-D',
    ],
    ['suffix with further slashes', '10.1234/a/b/c'],
    ['mixed case', '10.1234/AbC.Def'],
    ['non-ASCII letters in the suffix', '10.1234/café-ü'],
    ['astral-plane character in the suffix', '10.1234/\u{1F600}'],
  ])('%s: %s', (_what, doi) => {
    expect(doiProblem(doi)).toBeUndefined();
  });
});

describe('doiProblem: the DOI shape', () => {
  const SHAPE = 'not a DOI: expected 10.<4-9 digit registrant>/<non-empty suffix>';
  test.each([
    ['empty', ''],
    ['no 10. prefix', '11.1234/abc'],
    ['3-digit registrant', '10.123/abc'],
    ['10-digit registrant', '10.1234567890/abc'],
    ['empty suffix', '10.1234/'],
    ['no slash', '10.1234abc'],
    ['letters in the registrant', '10.12a4/abc'],
    ['dotted sub-registrant', '10.1234.5/abc'],
    ['non-ASCII digits in the registrant', '10.١٢٣٤/abc'],
    ['doi: form (deposits use the bare form)', 'doi:10.1234/abc'],
    ['https://doi.org/ form', 'https://doi.org/10.1234/abc'],
    ['leading space', ' 10.1234/abc'],
  ])('%s: %j', (_what, doi) => {
    expect(doiProblem(doi)).toBe(SHAPE);
  });
});

describe('doiProblem: forbidden characters anywhere', () => {
  test.each([
    ['space', '10.1234/a b', '0020', 9],
    ['trailing space', '10.1234/ab ', '0020', 10],
    ['tab', '10.1234/a\tb', '0009', 9],
    ['newline', '10.1234/a\nb', '000A', 9],
    ['NUL', '10.1234/a\u0000b', '0000', 9],
    ['DEL', '10.1234/a\u007fb', '007F', 9],
    ['C1 control', '10.1234/a\u0085b', '0085', 9],
    ['NBSP', '10.1234/a\u00a0b', '00A0', 9],
    ['line separator U+2028', '10.1234/a\u2028b', '2028', 9],
    ['paragraph separator U+2029', '10.1234/a\u2029b', '2029', 9],
    ['BOM U+FEFF', '10.1234/\ufeffab', 'FEFF', 8],
    ['zero-width space U+200B', '10.1234/ab\u200b', '200B', 10],
    ['soft hyphen U+00AD (Cf)', '10.1234/a\u00adb', '00AD', 9],
    ['ideographic space U+3000', '10.1234/a\u3000b', '3000', 9],
  ])('%s', (_what, doi, hex, index) => {
    expect(doiProblem(doi)).toBe(`contains a whitespace, control or format character (U+${hex}) at index ${index}`);
  });

  test('a lone high or low surrogate is rejected', () => {
    expect(doiProblem('10.1234/a\ud800b')).toBe('contains a lone UTF-16 surrogate');
    expect(doiProblem('10.1234/a\udc00')).toBe('contains a lone UTF-16 surrogate');
  });
});

describe('doiProblem: at most 1,024 bytes in UTF-8', () => {
  const prefix = '10.1234/';

  test('the bound is 1,024', () => {
    expect(MAX_DOI_BYTES).toBe(1024);
  });

  test('exactly 1,024 ASCII bytes is accepted; 1,025 is rejected', () => {
    const ok = prefix + 'a'.repeat(1024 - prefix.length);
    expect(Buffer.byteLength(ok)).toBe(1024);
    expect(doiProblem(ok)).toBeUndefined();
    expect(doiProblem(`${ok}a`)).toBe('longer than 1024 bytes in UTF-8');
  });

  test('bytes are counted, not UTF-16 units: 2-byte characters reach the bound at half the length', () => {
    // 8 ASCII bytes + 508 x 'é' (2 bytes) = 1,024 bytes, 516 UTF-16 units
    const ok = prefix + 'é'.repeat(508);
    expect(ok.length).toBe(516);
    expect(doiProblem(ok)).toBeUndefined();
    const over = `${ok}é`;
    expect(over.length).toBe(517); // far below 1,024 units, still over the byte bound
    expect(doiProblem(over)).toBe('longer than 1024 bytes in UTF-8');
  });

  test('3-byte characters are counted as 3 bytes', () => {
    // 8 + 338 * 3 = 1,022 bytes; + 'ab' = 1,024; + 'abc' = 1,025
    const base = prefix + '€'.repeat(338);
    expect(doiProblem(`${base}ab`)).toBeUndefined();
    expect(doiProblem(`${base}abc`)).toBe('longer than 1024 bytes in UTF-8');
  });
});

describe('doiKey: case-insensitive key, ASCII letters only', () => {
  test('ASCII upper-case letters are lower-cased', () => {
    expect(doiKey('10.1234/AbC-XYZ')).toBe('10.1234/abc-xyz');
    expect(doiKey('10.1234/ABC')).toBe(doiKey('10.1234/abc'));
  });

  test('a key without upper-case letters is returned unchanged', () => {
    expect(doiKey('10.1234/abc.def;1')).toBe('10.1234/abc.def;1');
  });

  test('non-ASCII letters are not folded', () => {
    expect(doiKey('10.1234/ÄÉ-A')).toBe('10.1234/ÄÉ-a');
    expect(doiKey('10.1234/ÄB')).not.toBe(doiKey('10.1234/äb'));
  });
});

describe('readDoiForm: API forms to the bare DOI', () => {
  test.each([
    ['10.1234/AbC', '10.1234/AbC'],
    ['  10.1234/AbC  ', '10.1234/AbC'],
    ['doi:10.1234/AbC', '10.1234/AbC'],
    ['DOI: 10.1234/AbC', '10.1234/AbC'],
    ['https://doi.org/10.1234/AbC', '10.1234/AbC'],
    ['http://dx.doi.org/10.1234/AbC', '10.1234/AbC'],
    ['HTTPS://DOI.ORG/10.1234/AbC', '10.1234/AbC'],
    // a doi.org link is a URL: its path is percent-decoded
    ['https://doi.org/10.1155%2F2008%2F961753', '10.1155/2008/961753'],
    [
      'http://dx.doi.org/10.1002/(SICI)1097-4636(199706)35:4%3C447::AID-JBM5%3E3.0.CO%3B2-D',
      '10.1002/(SICI)1097-4636(199706)35:4<447::AID-JBM5>3.0.CO;2-D',
    ],
    ['https://doi.org/10.1234/caf%C3%A9', '10.1234/café'],
    ['https://doi.org/10.1234/a%25b+c', '10.1234/a%b+c'], // %25 is "%"; "+" is not a space in a path
    // the bare and doi: forms are taken as they are
    ['10.1234/a%2Fb', '10.1234/a%2Fb'],
    ['doi:10.1234/a%2Fb', '10.1234/a%2Fb'],
    ['10.1234/100%', '10.1234/100%'],
    // doi: before a link, as taken before links were decoded
    ['doi:https://doi.org/10.1155%2F2008%2F961753', '10.1155/2008/961753'],
    ['doi: http://dx.doi.org/10.1234/AbC', '10.1234/AbC'],
  ])('%j -> %j', (input, bare) => {
    expect(readDoiForm(input)).toEqual({ bare });
  });

  test('a doi.org link that does not percent-decode, or decodes to something that is not a DOI, says why', () => {
    expect(readDoiForm('https://doi.org/10.1234/100%').problem).toBe(
      'the doi.org link has a malformed percent-encoding at index 11 of its DOI: a "%" must be followed by two hex digits (a "%" in a DOI is sent as %25)',
    );
    expect(readDoiForm('https://doi.org/10.1234/a%zzb').problem).toMatch(
      /malformed percent-encoding at index 9 of its DOI/,
    );
    expect(readDoiForm('https://doi.org/10.1234/a%C3%28').problem).toBe(
      "the doi.org link's percent-encoding %C3%28 at index 9 of its DOI does not decode to UTF-8 text",
    );
    expect(readDoiForm('https://doi.org/10.1234/a%ED%A0%80').problem).toMatch(
      /%ED%A0%80 at index 9 of its DOI does not decode to UTF-8/,
    );
    expect(readDoiForm('https://doi.org/10.1234/a%20b').problem).toMatch(
      /^contains a whitespace, control or format character \(U\+0020\)/,
    );
    expect(readDoiForm('https://doi.org/10.1234%2F').problem).toMatch(/^not a DOI/);
    expect(readDoiForm('not a DOI').problem).toMatch(/^not a DOI/);
    expect(readDoiForm('https://doi.org/doi:10.1234/a').problem).toMatch(/^not a DOI/); // a link to "doi:..." is none
  });
});
