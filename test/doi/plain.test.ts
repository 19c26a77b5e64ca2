import { describe, expect, test } from 'bun:test';
import {
  copyPlainDoi,
  doiKey,
  foldByte,
  foldedHash,
  NOT_PLAIN,
  plainDoiHash,
  plainDoiKey,
  readDoiForm,
} from '../../src/doi/index.ts';
import { seeded } from '../support/fixtures.ts';

/**
 * The fast path (src/doi/plain.ts) held to the general path (src/doi/rules.ts): on strings and on bytes it may
 * decline an input, but what it accepts the general rule accepts with the same key; it takes every bare,
 * printable-ASCII DOI without `"` or `\`; its folding is the key's folding and its hash is the key's hash.
 */

const encoder = new TextEncoder();

/** What the general path makes of an API input: its key, or undefined when it is not a DOI. */
function generalKey(input: string): string | undefined {
  const form = readDoiForm(input);
  return form.problem === undefined ? doiKey(form.bare) : undefined;
}

/** The bare DOI of an API input, or undefined. */
function bareOf(input: string): string | undefined {
  const form = readDoiForm(input);
  return form.problem === undefined ? form.bare : undefined;
}

/** The byte path on `input` placed inside a larger buffer (as in a request body): [hash, copied text]. */
function onBytes(input: string): [number, string] {
  const body = encoder.encode(`xx"${input}"yy`);
  const start = 3;
  const end = body.length - 3;
  const out = new Uint8Array(end - start + 8).fill(0x3f);
  const h = copyPlainDoi(body, start, end, out, 4);
  expect(plainDoiHash(body, start, end)).toBe(h); // the same decision and hash, without the copy
  return [h, h === NOT_PLAIN ? '' : new TextDecoder().decode(out.subarray(4, 4 + (end - start)))];
}

/** Every property the fast path owes the general path, for one input. */
function holdsToGeneral(input: string): void {
  const general = generalKey(input);
  const plain = plainDoiKey(input);
  // may decline, never disagrees
  if (plain !== undefined) expect(plain).toBe(general!);
  // takes every bare printable-ASCII DOI without the two characters JSON escapes
  if (general !== undefined && bareOf(input) === input && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(input))
    expect(plain).toBe(general);
  if (/["\\]/.test(input)) expect(plain).toBeUndefined();
  // the byte path takes exactly what the string path takes, copies it as is, and hashes it as its key
  const [h, copied] = onBytes(input);
  expect(h === NOT_PLAIN).toBe(plain === undefined);
  if (plain !== undefined) {
    expect(copied).toBe(input);
    const key = encoder.encode(plain);
    expect(h).toBe(foldedHash(key, 0, key.length));
  }
}

describe('the fast path agrees with the general path', () => {
  const inputs = [
    '10.1234/abc',
    '10.1016/S0140-6736(25)01234-5',
    '10.1002/ANIE.202501234',
    '10.123/abc',
    '10.1234567890/abc',
    '10.123456789/abc',
    '10.1234/',
    '10.1234',
    '10.1234/x',
    '10.1234/a b',
    '10.1234/a\u00a0b',
    '10.1234/é',
    ' 10.1234/abc',
    'doi:10.1234/ABC',
    'https://doi.org/10.1234/abc',
    '10.12a4/abc',
    '11.1234/abc',
    '10,1234/abc',
    '10.1234/a"b\\c',
    '10.1234/a\u007fb',
    "10.1234/~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
    `10.1234/${'x'.repeat(1024 - 8)}`,
    `10.1234/${'x'.repeat(1100)}`,
  ];
  for (const input of inputs) test(JSON.stringify(input.slice(0, 40)), () => holdsToGeneral(input));

  test("fuzz: 20,000 seeded strings near the rule's edges", () => {
    const rand = seeded(20261123);
    const pieces = [
      '10.',
      '1',
      '9',
      '0',
      '.',
      '/',
      'a',
      'Z',
      'x',
      ' ',
      '"',
      '\\',
      '\u007f',
      'é',
      '\u00a0',
      '~',
      '(',
      'doi:',
      '\t',
      '10.1234/',
    ];
    let plain = 0;
    for (let round = 0; round < 20_000; round++) {
      let s = rand() < 0.7 ? `10.${'1234567'.slice(0, 3 + Math.floor(rand() * 5))}/` : '';
      for (let n = Math.floor(rand() * 8); n > 0; n--) s += pieces[Math.floor(rand() * pieces.length)];
      holdsToGeneral(s);
      if (plainDoiKey(s) !== undefined) plain++;
    }
    expect(plain).toBeGreaterThan(2_000); // both sides of the rule were exercised
  });

  test('lower-cases ASCII letters only', () => {
    expect(plainDoiKey('10.1002/ANIE.2025')).toBe('10.1002/anie.2025');
    expect(plainDoiKey('10.1234/abc')).toBe('10.1234/abc');
  });
});

describe("folding and hash: the DOI key's rule on bytes", () => {
  test('foldByte folds exactly the ASCII letters, as doiKey does', () => {
    for (let c = 0; c < 128; c++) expect(foldByte(c)).toBe(doiKey(String.fromCharCode(c)).charCodeAt(0));
    for (let c = 128; c < 256; c++) expect(foldByte(c)).toBe(c); // UTF-8 bytes of non-ASCII characters are not folded
  });

  test('a key and any ASCII casing of it hash alike; the hash is never negative', () => {
    const rand = seeded(7);
    for (let i = 0; i < 2_000; i++) {
      const key = `10.${1000 + i}/k${i}-${Math.floor(rand() * 1e9).toString(36)}`;
      const cased = [...key].map((ch) => (rand() < 0.5 ? ch.toUpperCase() : ch)).join('');
      const a = encoder.encode(key);
      const b = encoder.encode(cased);
      expect(foldedHash(b, 0, b.length)).toBe(foldedHash(a, 0, a.length));
      expect(foldedHash(a, 0, a.length)).toBeGreaterThanOrEqual(0);
    }
  });

  test('non-ASCII letters are not folded into each other', () => {
    const a = encoder.encode('10.1234/É');
    const b = encoder.encode('10.1234/é');
    expect(foldedHash(a, 0, a.length)).not.toBe(foldedHash(b, 0, b.length));
  });
});
