import { describe, expect, test } from 'bun:test';
import type { Fault } from '../../src/base/fault.ts';
import {
  MAX_LINE_BYTES,
  MAX_RECORDS_PER_FILE,
  type ParsedDeposit,
  type ParsedRecord,
  parseDepositFile,
  parseDepositText,
  parseRecordLine,
  type RejectedLine,
} from '../../src/deposit/index.ts';
import { gzLines } from '../support/fixtures.ts';

/** docs/interface.md, "Depositing holdings": record schema, lines, and file-level faults. */

const MAX = { maxDecompressedBytes: 64 * 1024 * 1024 };

function isFault(r: unknown): r is Fault {
  return typeof r === 'object' && r !== null && 'code' in r && !('records' in r);
}

function text(s: string): ParsedDeposit {
  const r = parseDepositText(Buffer.from(s, 'utf8'));
  if (isFault(r)) throw new Error(`unexpected file fault ${r.code}: ${r.message}`);
  return r;
}

function bytes(b: Uint8Array): ParsedDeposit {
  const r = parseDepositText(b);
  if (isFault(r)) throw new Error(`unexpected file fault ${r.code}: ${r.message}`);
  return r;
}

async function file(gz: Uint8Array, max = MAX.maxDecompressedBytes): Promise<ParsedDeposit> {
  const r = await parseDepositFile(gz, { maxDecompressedBytes: max });
  if (isFault(r)) throw new Error(`unexpected file fault ${r.code}: ${r.message}`);
  return r;
}

async function fileFault(gz: Uint8Array, max = MAX.maxDecompressedBytes): Promise<Fault> {
  const r = await parseDepositFile(gz, { maxDecompressedBytes: max });
  if (!isFault(r)) throw new Error(`expected a file fault, got ${r.records.length} records`);
  return r;
}

function rejectOf(line: string, lineNo = 1): RejectedLine {
  const r = parseRecordLine(line, lineNo);
  if (!('code' in r)) throw new Error(`expected ${line} to be rejected, got ${JSON.stringify(r)}`);
  return r;
}

function acceptOf(line: string, lineNo = 1): ParsedRecord {
  const r = parseRecordLine(line, lineNo);
  if ('code' in r) throw new Error(`expected ${line} to be accepted: ${r.message}`);
  return r;
}

const lines = (ls: readonly (object | string)[], ending = '\n') =>
  ls.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join(ending);

describe('record schema', () => {
  test('the three documented shapes are valid and kept as deposited', () => {
    const full = {
      doi: '10.1234/Full',
      accessType: 'open',
      vor: [{ url: 'https://p.example/full.pdf', contentType: 'application/pdf' }],
    };
    const accessOnly = { doi: '10.1234/only', accessType: 'paid' };
    const removal = { doi: '10.1234/gone', deleted: true };
    expect(acceptOf(JSON.stringify(full), 4)).toEqual({ line: 4, key: '10.1234/full', record: full as never });
    expect(acceptOf(JSON.stringify(accessOnly))).toEqual({ line: 1, key: '10.1234/only', record: accessOnly as never });
    expect(acceptOf(JSON.stringify(removal))).toEqual({ line: 1, key: '10.1234/gone', record: removal as never });
  });

  test('a record with the DOI only is valid (no access type stored)', () => {
    const r = acceptOf('{"doi":"10.1234/bare"}');
    expect(r.record).toEqual({ doi: '10.1234/bare' });
    expect(r.record.accessType).toBeUndefined();
  });

  test('deleted=false is a plain record', () => {
    expect(acceptOf('{"doi":"10.1234/x","deleted":false,"accessType":"free"}').record).toEqual({
      doi: '10.1234/x',
      deleted: false,
      accessType: 'free',
    });
  });

  test.each(['paid', 'open', 'free', 'permFree'])('accessType %s is accepted', (a) => {
    expect(acceptOf(JSON.stringify({ doi: '10.1234/x', accessType: a })).record.accessType).toBe(a as never);
  });

  test.each(['Open', 'PAID', 'permfree', 'perm_free', 'closed', ''])(
    'accessType %j is rejected with the allowed values',
    (a) => {
      expect(rejectOf(JSON.stringify({ doi: '10.1234/x', accessType: a }), 7)).toEqual({
        line: 7,
        path: '/accessType',
        code: 'SCHEMA',
        message: `must be one of paid, open, free, permFree (got ${JSON.stringify(a)})`,
      });
    },
  );

  test('accessType of the wrong type is rejected', () => {
    const r = rejectOf('{"doi":"10.1234/x","accessType":1}');
    expect(r.path).toBe('/accessType');
    expect(r.code).toBe('SCHEMA');
  });

  test.each(['application/pdf', 'text/html', 'application/epub+zip', 'other'])('contentType %s is accepted', (c) => {
    expect(
      acceptOf(JSON.stringify({ doi: '10.1234/x', vor: [{ url: 'https://x.example/', contentType: c }] })).record.vor,
    ).toEqual([{ url: 'https://x.example/', contentType: c as never }]);
  });

  test('contentType outside the enum is rejected with its path', () => {
    expect(
      rejectOf(
        '{"doi":"10.1234/x","vor":[{"url":"https://a.example"},{"url":"https://b.example","contentType":"pdf"}]}',
        2,
      ),
    ).toEqual({
      line: 2,
      path: '/vor/1/contentType',
      code: 'SCHEMA',
      message: 'must be one of application/pdf, text/html, application/epub+zip, other (got "pdf")',
    });
  });

  test('vor: at least one item when present', () => {
    expect(rejectOf('{"doi":"10.1234/x","vor":[]}', 3)).toEqual({
      line: 3,
      path: '/vor',
      code: 'SCHEMA',
      message: 'must have at least one item (got [])',
    });
  });

  test('vor must be an array of objects', () => {
    expect(rejectOf('{"doi":"10.1234/x","vor":{"url":"https://a.example"}}').path).toBe('/vor');
    expect(rejectOf('{"doi":"10.1234/x","vor":["https://a.example"]}').path).toBe('/vor/0');
  });

  test('vor items are kept as deposited: order and duplicates', () => {
    const vor = [
      { url: 'https://b.example/2' },
      { url: 'https://a.example/1', contentType: 'text/html' },
      { url: 'https://b.example/2' },
    ];
    expect(acceptOf(JSON.stringify({ doi: '10.1234/x', vor })).record.vor).toEqual(vor as never);
  });

  test('vor item url is required', () => {
    expect(rejectOf('{"doi":"10.1234/x","vor":[{"contentType":"other"}]}')).toEqual({
      line: 1,
      path: '/vor/0/url',
      code: 'SCHEMA',
      message: 'url is required',
    });
  });

  test.each(['http://a.example/x', 'https://a.example/x', 'https://', 'http://not a valid url but matches'])(
    'url %j matches ^https?://',
    (url) => {
      expect(acceptOf(JSON.stringify({ doi: '10.1234/x', vor: [{ url }] })).record.vor![0]!.url).toBe(url);
    },
  );

  test.each([
    'HTTPS://a.example/x',
    'Http://a.example',
    'ftp://a.example/x',
    '//a.example/x',
    ' https://a.example',
    'a.example/x',
    'https:/a.example',
    '',
  ])('url %j is rejected (case-sensitive, nothing more)', (url) => {
    expect(rejectOf(JSON.stringify({ doi: '10.1234/x', vor: [{ url }] }), 9)).toEqual({
      line: 9,
      path: '/vor/0/url',
      code: 'SCHEMA',
      message: `must be an http(s) URL, starting http:// or https:// (got ${JSON.stringify(url)})`,
    });
  });

  test('no properties other than the listed ones on a record', () => {
    expect(rejectOf('{"doi":"10.1234/x","accessType":"open","title":"A paper"}', 5)).toEqual({
      line: 5,
      path: '/title',
      code: 'SCHEMA',
      message: 'property "title" is not allowed (allowed: doi, accessType, deleted, vor)',
    });
  });

  test('no properties other than the listed ones on a vor item', () => {
    expect(rejectOf('{"doi":"10.1234/x","vor":[{"url":"https://a.example","size":12}]}', 6)).toEqual({
      line: 6,
      path: '/vor/0/size',
      code: 'SCHEMA',
      message: 'property "size" is not allowed (allowed: url, contentType)',
    });
  });

  test('property names are case-sensitive: DOI is not doi, and the message says which was meant', () => {
    expect(rejectOf('{"DOI":"10.1234/x"}')).toEqual({
      line: 1,
      path: '/doi',
      code: 'SCHEMA',
      message: 'doi is required; property "DOI" is not allowed: did you mean "doi"?',
    });
  });

  test.each([
    ['{"doi":"10.1234/x","acessType":"open"}', '/acessType', 'accessType'],
    ['{"doi":"10.1234/x","accesstype":"open"}', '/accesstype', 'accessType'],
    ['{"doi":"10.1234/x","delted":true}', '/delted', 'deleted'],
    ['{"doi":"10.1234/x","vro":[]}', '/vro', 'vor'],
    [
      '{"doi":"10.1234/x","vor":[{"url":"https://a.example","contenttype":"other"}]}',
      '/vor/0/contenttype',
      'contentType',
    ],
    [
      '{"doi":"10.1234/x","vor":[{"url":"https://a.example","contentTyp":"other"}]}',
      '/vor/0/contentTyp',
      'contentType',
    ],
  ])('an unknown property a typo away from a known one: %s suggests it', (line, path, meant) => {
    const r = rejectOf(line);
    expect(r).toMatchObject({ path, code: 'SCHEMA' });
    expect(r.message).toBe(
      `property ${JSON.stringify(path.split('/').pop())} is not allowed; did you mean "${meant}"?`,
    );
  });

  test('a property far from every known one gets no guess, but the list of allowed ones', () => {
    // "id" is two edits from "doi": too far for a three-letter name
    expect(rejectOf('{"doi":"10.1234/x","id":"7"}').message).toBe(
      'property "id" is not allowed (allowed: doi, accessType, deleted, vor)',
    );
    // a name the record already has is not suggested for another
    expect(rejectOf('{"doi":"10.1234/x","vor":[{"url":"https://a.example","URL":"x"}]}').message).toBe(
      'property "URL" is not allowed (allowed: url, contentType)',
    );
  });

  test('a property name is quoted as JSON in the message: its line breaks are not printed raw', () => {
    expect(rejectOf('{"doi":"10.1234/x","a\\nb/c":1}')).toMatchObject({
      path: '/a\nb~1c',
      message: 'property "a\\nb/c" is not allowed (allowed: doi, accessType, deleted, vor)',
    });
  });

  test('no schema message shows a regular expression or repeats the field path reported beside it', () => {
    for (const line of [
      '{"doi":"10.1234/x","vor":[{"url":"ftp://a.example"}]}',
      '{"doi":"10.1234/x","vor":[]}',
      '{"doi":"10.1234/x","vor":{}}',
      '{"doi":"10.1234/x","vor":["https://a.example"]}',
      '{"doi":"10.1234/x","vor":[{"url":"https://a.example","contentType":"pdf"}]}',
      '{"doi":"10.1234/x","vor":[{"url":"https://a.example","size":1}]}',
      '{"doi":"10.1234/x","vor":[{"contentType":"other"}]}',
      '{"doi":"10.1234/x","vor":[{"url":"https://\\ud800"}]}',
      '{"doi":"10.1234/x","accessType":"Open"}',
      '{"doi":"10.1234/x","deleted":1}',
      '{"doi":7}',
    ]) {
      const r = rejectOf(line);
      expect(r.code).toBe('SCHEMA');
      expect(r.message).not.toContain(r.path);
      expect(r.message).not.toMatch(/\^|Expected |match/);
    }
  });

  test('doi is required', () => {
    expect(rejectOf('{"accessType":"open"}', 2)).toEqual({
      line: 2,
      path: '/doi',
      code: 'SCHEMA',
      message: 'doi is required',
    });
  });

  test('doi must be a string', () => {
    expect(rejectOf('{"doi":101234}')).toEqual({
      line: 1,
      path: '/doi',
      code: 'SCHEMA',
      message: 'must be a string (got 101234)',
    });
  });

  test('deleted must be a boolean', () => {
    expect(rejectOf('{"doi":"10.1234/x","deleted":"true"}')).toEqual({
      line: 1,
      path: '/deleted',
      code: 'SCHEMA',
      message: 'must be true or false (got "true")',
    });
  });

  test('a syntactically bad DOI is rejected at /doi with the reason', () => {
    expect(rejectOf('{"doi":"doi:10.1234/x"}', 8)).toEqual({
      line: 8,
      path: '/doi',
      code: 'INVALID_DOI',
      message: 'doi "doi:10.1234/x": not a DOI: expected 10.<4-9 digit registrant>/<non-empty suffix>',
    });
    expect(rejectOf(JSON.stringify({ doi: '10.1234/a\u00a0b' })).message).toBe(
      'doi "10.1234/a\u00a0b": contains a whitespace, control or format character (U+00A0) at index 9',
    );
    expect(rejectOf('{"doi":"10.1234/a\\ud800"}').message).toBe(
      'doi "10.1234/a\\ud800": contains a lone UTF-16 surrogate',
    );
  });

  test('a DOI over 1,024 bytes is rejected; the message quotes only its first 80 characters', () => {
    const doi = `10.1234/${'x'.repeat(1100)}`;
    const r = rejectOf(JSON.stringify({ doi }));
    expect(r.code).toBe('INVALID_DOI');
    expect(r.path).toBe('/doi');
    expect(r.message).toBe(`doi ${JSON.stringify(doi.slice(0, 80))}: longer than 1024 bytes in UTF-8`);
    expect(acceptOf(JSON.stringify({ doi: doi.slice(0, 1024) })).record.doi).toBe(doi.slice(0, 1024));
  });

  test('the key is case-insensitive but the record keeps the DOI as deposited', () => {
    const r = acceptOf('{"doi":"10.1234/AbC.XyZ"}');
    expect(r.key).toBe('10.1234/abc.xyz');
    expect(r.record.doi).toBe('10.1234/AbC.XyZ');
  });

  test('a member name given twice keeps its last value', () => {
    const r = acceptOf('{"doi":"10.1234/first","accessType":"paid","doi":"10.1234/second","accessType":"open"}');
    expect(r.key).toBe('10.1234/second');
    expect(r.record).toEqual({ doi: '10.1234/second', accessType: 'open' });
  });

  test('invalid JSON is rejected for the whole line', () => {
    const r = rejectOf('{"doi":"10.1234/x",', 12);
    expect(r.line).toBe(12);
    expect(r.path).toBe('');
    expect(r.code).toBe('INVALID_JSON');
    expect(r.message.startsWith('not valid JSON: ')).toBe(true);
  });

  test.each(['[{"doi":"10.1234/x"}]', '"10.1234/x"', '42', 'null', 'true'])(
    'JSON that is not an object (%s) is rejected',
    (line) => {
      expect(rejectOf(line, 3)).toEqual({
        line: 3,
        path: '',
        code: 'NOT_AN_OBJECT',
        message: 'each line must be one JSON object',
      });
    },
  );

  test('two JSON objects on one line are invalid JSON', () => {
    expect(rejectOf('{"doi":"10.1234/a"}{"doi":"10.1234/b"}').code).toBe('INVALID_JSON');
  });
});

describe('lines', () => {
  test('valid records are returned sorted by key, one per DOI, with their line numbers', () => {
    const p = text(
      lines([{ doi: '10.1234/c' }, { doi: '10.1234/A', accessType: 'open' }, { doi: '10.1234/b', deleted: true }]) +
        '\n',
    );
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/a', 2],
      ['10.1234/b', 3],
      ['10.1234/c', 1],
    ]);
    expect(p.records[0]!.record).toEqual({ doi: '10.1234/A', accessType: 'open' });
    expect(p.rejected).toEqual([]);
    expect(p.recordLines).toBe(3);
    expect(p.superseded).toBe(0);
  });

  test('the last line needs no final newline, and a final newline adds no line', () => {
    const a = text('{"doi":"10.1234/a"}\n{"doi":"10.1234/b"}');
    const b = text('{"doi":"10.1234/a"}\n{"doi":"10.1234/b"}\n');
    expect(a.records.map((r) => r.key)).toEqual(['10.1234/a', '10.1234/b']);
    expect(b.records.map((r) => r.key)).toEqual(['10.1234/a', '10.1234/b']);
    expect(a.recordLines).toBe(2);
    expect(b.recordLines).toBe(2);
    expect(b.decompressedBytes).toBe(a.decompressedBytes + 1);
  });

  test('blank lines (empty, spaces, tabs) are skipped, not counted, but keep line numbering', () => {
    const p = text(['', '{"doi":"10.1234/a"}', '   ', '\t \t', '{"doi":"10.1234/b"}', '', 'not json', ''].join('\n'));
    expect(p.recordLines).toBe(3);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/a', 2],
      ['10.1234/b', 5],
    ]);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([[7, 'INVALID_JSON']]);
  });

  test('an empty text or only blank lines gives no records', () => {
    for (const s of ['', '\n', '\n\n  \n\t\n', '\r\n\r\n']) {
      const p = text(s);
      expect(p.records).toEqual([]);
      expect(p.rejected).toEqual([]);
      expect(p.recordLines).toBe(0);
    }
  });

  test('other whitespace is not blank: a line of NBSP or a form feed is an invalid record', () => {
    const p = text('{"doi":"10.1234/a"}\n\u00a0\n\f\n');
    expect(p.recordLines).toBe(3);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([
      [2, 'INVALID_JSON'],
      [3, 'INVALID_JSON'],
    ]);
  });

  test('CRLF line endings are accepted: one trailing \\r per line is dropped', () => {
    const p = text(`${lines([{ doi: '10.1234/a', accessType: 'open' }, '', { doi: '10.1234/b' }], '\r\n')}\r\n`);
    expect(p.rejected).toEqual([]);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/a', 1],
      ['10.1234/b', 3],
    ]);
    expect(p.recordLines).toBe(2);
  });

  test('mixed LF and CRLF endings in one file', () => {
    const p = text('{"doi":"10.1234/a"}\r\n{"doi":"10.1234/b"}\n{"doi":"10.1234/c"}\r\n');
    expect(p.rejected).toEqual([]);
    expect(p.records.map((r) => r.key)).toEqual(['10.1234/a', '10.1234/b', '10.1234/c']);
  });

  test('a lone \\r is not a line ending', () => {
    const p = text('{"doi":"10.1234/a"}\r{"doi":"10.1234/b"}\n');
    expect(p.recordLines).toBe(1);
    expect(p.records).toEqual([]);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([[1, 'INVALID_JSON']]);
  });

  test('only one trailing \\r is dropped', () => {
    // "\r\r" before "\n": one is dropped, the other is JSON whitespace, so the record is still valid JSON
    const p = text('{"doi":"10.1234/a"}\r\r\n');
    expect(p.records.map((r) => r.key)).toEqual(['10.1234/a']);
    // a line of "\r\r" is not blank after dropping one \r
    const q = text('{"doi":"10.1234/a"}\n\r\r\n');
    expect(q.recordLines).toBe(2);
    expect(q.rejected.map((r) => [r.line, r.code])).toEqual([[2, 'INVALID_JSON']]);
  });

  test('a UTF-8 BOM is skipped at the start of the file only', () => {
    const bom = '\ufeff';
    const p = text(`${bom}{"doi":"10.1234/a"}\n${bom}{"doi":"10.1234/b"}\n`);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([['10.1234/a', 1]]);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([[2, 'INVALID_JSON']]);
  });

  test('strict UTF-8: a line with invalid bytes is an invalid record; the other lines are parsed', () => {
    const bad = Buffer.concat([
      Buffer.from('{"doi":"10.1234/a"}\n'),
      Buffer.from('{"doi":"10.1234/'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n'),
      Buffer.from('{"doi":"10.1234/c","accessType":"open"}\r\n'),
      Buffer.from([0xc3]), // truncated 2-byte sequence at the end of a line
      Buffer.from('\n{"doi":"10.1234/é"}'),
    ]);
    const p = bytes(bad);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/a', 1],
      ['10.1234/c', 3],
      ['10.1234/é', 5],
    ]);
    expect(p.rejected).toEqual([
      { line: 2, path: '', code: 'INVALID_UTF8', message: 'the line is not valid UTF-8' },
      { line: 4, path: '', code: 'INVALID_UTF8', message: 'the line is not valid UTF-8' },
    ]);
    expect(p.recordLines).toBe(5);
  });

  test('strict UTF-8: an encoded lone surrogate (CESU) and an overlong encoding are invalid', () => {
    const p = bytes(
      Buffer.concat([
        Buffer.from('{"doi":"10.1234/'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('"}\n{"doi":"10.1234/'),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('"}\n{"doi":"10.1234/ok"}'),
      ]),
    );
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([
      [1, 'INVALID_UTF8'],
      [2, 'INVALID_UTF8'],
    ]);
    expect(p.records.map((r) => r.key)).toEqual(['10.1234/ok']);
  });

  test('a BOM is skipped also when a later line is invalid UTF-8 (line-by-line path)', () => {
    const p = bytes(
      Buffer.concat([Buffer.from('\ufeff{"doi":"10.1234/a"}\n'), Buffer.from([0xff]), Buffer.from('\n')]),
    );
    expect(p.records.map((r) => [r.key, r.line])).toEqual([['10.1234/a', 1]]);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([[2, 'INVALID_UTF8']]);
  });

  test('each rejected line is reported with its line number, field path and reason; valid lines are kept', () => {
    const p = text(
      lines([
        { doi: '10.1234/ok1', accessType: 'open' },
        { doi: '10.1234/x', accessType: 'gratis' },
        '{broken',
        { doi: '10.1234/y', vor: [{ url: 'ftp://y.example' }] },
        { doi: 'not-a-doi' },
        { doi: '10.1234/z', extra: true },
        { doi: '10.1234/ok2', deleted: true },
      ]),
    );
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/ok1', 1],
      ['10.1234/ok2', 7],
    ]);
    expect(p.rejected.map((r) => [r.line, r.path, r.code])).toEqual([
      [2, '/accessType', 'SCHEMA'],
      [3, '', 'INVALID_JSON'],
      [4, '/vor/0/url', 'SCHEMA'],
      [5, '/doi', 'INVALID_DOI'],
      [6, '/extra', 'SCHEMA'],
    ]);
    expect(p.rejected.every((r) => r.message.length > 0)).toBe(true);
    expect(p.recordLines).toBe(7);
  });
});

describe('line length bound (65,536 bytes of content)', () => {
  // A valid record padded with JSON whitespace to exactly n bytes.
  const padded = (n: number) => {
    const head = '{"doi":"10.1234/long"';
    return `${head + ' '.repeat(n - head.length - 1)}}`;
  };

  test('the bound is 65,536', () => {
    expect(MAX_LINE_BYTES).toBe(65_536);
  });

  test('a line of exactly 65,536 bytes is parsed; 65,537 is rejected', () => {
    expect(padded(MAX_LINE_BYTES).length).toBe(MAX_LINE_BYTES);
    const p = text(`${padded(MAX_LINE_BYTES)}\n${padded(MAX_LINE_BYTES + 1)}\n{"doi":"10.1234/short"}`);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/long', 1],
      ['10.1234/short', 3],
    ]);
    expect(p.rejected).toEqual([{ line: 2, path: '', code: 'LINE_TOO_LONG', message: 'the line is over 65536 bytes' }]);
    expect(p.recordLines).toBe(3);
  });

  test('the line ending is not counted: 65,536 bytes + CRLF is fine', () => {
    const p = text(`${padded(MAX_LINE_BYTES)}\r\n`);
    expect(p.rejected).toEqual([]);
    expect(p.records).toHaveLength(1);
  });

  test('bytes are counted, not characters', () => {
    // 32,768 x "é" = 65,536 bytes: within the bound, so it fails as JSON, not as too long
    const atBound = text('é'.repeat(32_768));
    expect(atBound.rejected.map((r) => r.code)).toEqual(['INVALID_JSON']);
    // 32,769 x "é" = 65,538 bytes in 32,769 characters: over the bound
    const over = text('é'.repeat(32_769));
    expect(over.rejected.map((r) => r.code)).toEqual(['LINE_TOO_LONG']);
  });

  test('an over-long line of spaces is an invalid record, not a blank line', () => {
    const p = text(`{"doi":"10.1234/a"}\n${' '.repeat(MAX_LINE_BYTES + 1)}\n`);
    expect(p.recordLines).toBe(2);
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([[2, 'LINE_TOO_LONG']]);
  });

  test('the bound also holds on the line-by-line path (a file with invalid UTF-8 elsewhere)', () => {
    const p = bytes(
      Buffer.concat([Buffer.from([0xff]), Buffer.from(`\n${padded(MAX_LINE_BYTES + 1)}\n${padded(MAX_LINE_BYTES)}\n`)]),
    );
    expect(p.rejected.map((r) => [r.line, r.code])).toEqual([
      [1, 'INVALID_UTF8'],
      [2, 'LINE_TOO_LONG'],
    ]);
    expect(p.records.map((r) => [r.key, r.line])).toEqual([['10.1234/long', 3]]);
  });
});

describe('later lines win for the same DOI', () => {
  test('the last valid line for a DOI is kept; earlier ones are counted as superseded', () => {
    const p = text(
      lines([
        { doi: '10.1234/x', accessType: 'paid', vor: [{ url: 'https://a.example/1' }] },
        { doi: '10.1234/other' },
        { doi: '10.1234/x', accessType: 'open' },
        { doi: '10.1234/x', accessType: 'free' },
      ]),
    );
    expect(p.records).toHaveLength(2);
    const x = p.records.find((r) => r.key === '10.1234/x')!;
    expect(x.line).toBe(4);
    expect(x.record).toEqual({ doi: '10.1234/x', accessType: 'free' });
    expect(p.superseded).toBe(2);
  });

  test('DOIs are matched case-insensitively and the later spelling is kept', () => {
    const p = text(
      lines([
        { doi: '10.1234/AbC', accessType: 'paid' },
        { doi: '10.1234/abc', accessType: 'open' },
        { doi: '10.1234/ABC', accessType: 'free' },
      ]),
    );
    expect(p.records).toEqual([{ line: 3, key: '10.1234/abc', record: { doi: '10.1234/ABC', accessType: 'free' } }]);
    expect(p.superseded).toBe(2);
  });

  test('a removal after a record wins, and a record after a removal wins', () => {
    const removedLast = text(
      lines([
        { doi: '10.1234/x', accessType: 'open' },
        { doi: '10.1234/X', deleted: true },
      ]),
    );
    expect(removedLast.records).toEqual([{ line: 2, key: '10.1234/x', record: { doi: '10.1234/X', deleted: true } }]);
    const addedLast = text(
      lines([
        { doi: '10.1234/x', deleted: true },
        { doi: '10.1234/x', accessType: 'permFree' },
      ]),
    );
    expect(addedLast.records).toEqual([
      { line: 2, key: '10.1234/x', record: { doi: '10.1234/x', accessType: 'permFree' } },
    ]);
    expect(removedLast.superseded).toBe(1);
    expect(addedLast.superseded).toBe(1);
  });

  test('an invalid later line does not replace an earlier valid one', () => {
    const p = text(
      lines([
        { doi: '10.1234/x', accessType: 'open' },
        { doi: '10.1234/x', accessType: 'bogus' },
      ]),
    );
    expect(p.records).toEqual([{ line: 1, key: '10.1234/x', record: { doi: '10.1234/x', accessType: 'open' } }]);
    expect(p.superseded).toBe(0);
    expect(p.rejected.map((r) => [r.line, r.path])).toEqual([[2, '/accessType']]);
  });

  test('a removal record is a record with deleted=true', () => {
    const p = text(lines([{ doi: '10.1234/gone', deleted: true }]));
    expect(p.records).toEqual([{ line: 1, key: '10.1234/gone', record: { doi: '10.1234/gone', deleted: true } }]);
  });
});

describe('at most 10,000 records per file', () => {
  const recs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ doi: `10.1234/r${from + i}` }));

  test('the limit is 10,000', () => {
    expect(MAX_RECORDS_PER_FILE).toBe(10_000);
  });

  test('exactly 10,000 records are accepted', async () => {
    const p = await file(gzLines(recs(10_000)));
    expect(p.recordLines).toBe(10_000);
    expect(p.records).toHaveLength(10_000);
    expect(p.rejected).toEqual([]);
  });

  test('10,001 records reject the whole file with a file-level fault', async () => {
    const f = await fileFault(gzLines(recs(10_001)));
    expect(f).toEqual({
      code: 'TOO_MANY_RECORDS',
      message: 'the file has more than 10000 records (line 10001 is record 10001); nothing was applied',
    });
  });

  test('invalid lines count toward the limit', async () => {
    const f = await fileFault(gzLines([...recs(9_999), '{not json', 'neither']));
    expect(f.code).toBe('TOO_MANY_RECORDS');
    const ok = await file(gzLines([...recs(9_999), '{not json']));
    expect(ok.recordLines).toBe(10_000);
    expect(ok.records).toHaveLength(9_999);
    expect(ok.rejected.map((r) => [r.line, r.code])).toEqual([[10_000, 'INVALID_JSON']]);
  });

  test('lines that are not UTF-8 count toward the limit too', async () => {
    const valid = Buffer.from(
      recs(10_000)
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const notUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"\xff\xfe"}
    const gz = (extra: number) =>
      Bun.gzipSync(
        Buffer.concat([valid, ...Array.from({ length: extra }, () => Buffer.concat([Buffer.from('\n'), notUtf8]))]),
      );
    const f = await fileFault(gz(2));
    expect(f).toEqual({
      code: 'TOO_MANY_RECORDS',
      message: 'the file has more than 10000 records (line 10001 is record 10001); nothing was applied',
    });
    const recordsOnly = await file(Bun.gzipSync(valid));
    expect(recordsOnly.recordLines).toBe(10_000);
  });

  test('repeated DOIs count as separate lines', async () => {
    const same = Array.from({ length: 10_001 }, () => ({ doi: '10.1234/same' }));
    expect((await fileFault(gzLines(same))).code).toBe('TOO_MANY_RECORDS');
  });

  test('blank lines do not count', async () => {
    const withBlanks = recs(10_000).flatMap((r, i) => (i % 1000 === 0 ? ['', '  ', r] : [r]));
    const p = await file(gzLines(withBlanks, '\r\n'));
    expect(p.recordLines).toBe(10_000);
    expect(p.records).toHaveLength(10_000);
    const f = await fileFault(gzLines([...withBlanks, '\t', { doi: '10.1234/one-more' }]));
    expect(f.code).toBe('TOO_MANY_RECORDS');
    expect(f.message).toContain(`line ${withBlanks.length + 2} is record 10001`);
  });

  test('the parsed text gives the same fault without gzip', () => {
    const r = parseDepositText(Buffer.from(lines(recs(10_001))));
    expect(isFault(r) && r.code).toBe('TOO_MANY_RECORDS');
  });
});

describe('gzip and file-level faults', () => {
  const sample = `${lines([{ doi: '10.1234/a', accessType: 'open' }, { doi: '10.1234/b' }])}\n`;

  test('a gzip deposit is decompressed and parsed; decompressedBytes is the text size', async () => {
    const p = await file(Bun.gzipSync(Buffer.from(sample)));
    expect(p.records.map((r) => r.key)).toEqual(['10.1234/a', '10.1234/b']);
    expect(p.decompressedBytes).toBe(Buffer.byteLength(sample));
  });

  test('a gzip file of several members (concatenated) is read whole', async () => {
    const gz = Buffer.concat([
      Bun.gzipSync(Buffer.from('{"doi":"10.1234/a"}\n')),
      Bun.gzipSync(Buffer.from('{"doi":"10.1234/b"}')),
    ]);
    expect((await file(gz)).records.map((r) => [r.key, r.line])).toEqual([
      ['10.1234/a', 1],
      ['10.1234/b', 2],
    ]);
  });

  test('an empty (0-byte) file is a file-level fault', async () => {
    expect(await fileFault(new Uint8Array(0))).toEqual({
      code: 'EMPTY_FILE',
      message: 'the file is empty (0 bytes): not a gzip file',
    });
  });

  test('plain (not gzip) content is a file-level fault', async () => {
    const notGzip = { code: 'NOT_GZIP' as const, message: 'the content is not gzip-compressed (no gzip header)' };
    expect(await fileFault(Buffer.from(sample))).toEqual(notGzip);
    expect(await fileFault(Uint8Array.of(0x1f))).toEqual(notGzip);
    expect(await fileFault(Bun.deflateSync(Buffer.from(sample)))).toEqual(notGzip);
  });

  test('a truncated gzip stream is a file-level fault', async () => {
    const gz = Bun.gzipSync(Buffer.from(sample.repeat(50)));
    for (const cut of [gz.length - 1, gz.length - 8, Math.floor(gz.length / 2), 10]) {
      expect(await fileFault(gz.subarray(0, cut))).toEqual({
        code: 'GZIP_TRUNCATED',
        message: 'the gzip stream is truncated (unexpected end of file)',
      });
    }
  });

  test('a corrupt gzip stream (bad CRC, bad header, trailing garbage) is a file-level fault', async () => {
    const gz = Bun.gzipSync(Buffer.from(sample));
    const badCrc = Uint8Array.from(gz);
    badCrc[badCrc.length - 8]! ^= 0xff;
    const badMethod = Uint8Array.from(gz);
    badMethod[2] = 0x07; // compression method other than deflate
    for (const bad of [badCrc, badMethod, Buffer.concat([gz, Buffer.from('garbage')])]) {
      const f = await fileFault(bad);
      expect(f.code).toBe('GZIP_CORRUPT');
      expect(f.message.startsWith('the gzip stream is corrupt: ')).toBe(true);
    }
  });

  test('decompressed size bound: exactly the bound is fine, one byte over is a file-level fault', async () => {
    const gz = Bun.gzipSync(Buffer.from(sample));
    const size = Buffer.byteLength(sample);
    expect((await file(gz, size)).records).toHaveLength(2);
    expect(await fileFault(gz, size - 1)).toEqual({
      code: 'TOO_LARGE',
      message: `the decompressed content is over the ${size - 1}-byte bound`,
    });
  });

  test('a gzip bomb stops at the bound instead of inflating', async () => {
    const bomb = Bun.gzipSync(new Uint8Array(64 * 1024 * 1024)); // 64 MiB of zeros in ~64 KiB
    expect(bomb.length).toBeLessThan(256 * 1024);
    expect(await fileFault(bomb, 1024 * 1024)).toEqual({
      code: 'TOO_LARGE',
      message: 'the decompressed content is over the 1048576-byte bound',
    });
  });

  test('gzLines-style files with CRLF endings parse the same as LF', async () => {
    const recs = [
      { doi: '10.1234/a', accessType: 'open' },
      '',
      { doi: '10.1234/b', vor: [{ url: 'https://b.example' }] },
    ];
    const lf = await file(gzLines(recs));
    const crlf = await file(gzLines(recs, '\r\n'));
    expect(crlf.records).toEqual(lf.records);
    expect(crlf.rejected).toEqual([]);
    expect(crlf.decompressedBytes).toBe(lf.decompressedBytes + 2);
  });
});
