import { describe, expect, test } from 'bun:test';
import { UpdatesTable } from '../../../src/store/index.ts';

/** The Updates API's lookup table finds a DOI's list from the bytes of a request, ASCII letters folded. */

const encoder = new TextEncoder();

describe('UpdatesTable: lookups from bytes', () => {
  const list = (s: string) => encoder.encode(JSON.stringify([{ note: s }]));
  const keys = [
    '10.1234/abc',
    '10.1002/anie.2025',
    '10.5555/é-unicode',
    '10.5555/a"quote',
    ...Array.from({ length: 5000 }, (_, i) => `10.${1000 + (i % 9000)}/k${i}`),
  ];
  const table = UpdatesTable.of(new Map(keys.map((k) => [k, list(k)])));
  const at = (s: string) => {
    const b = encoder.encode(`xx${s}yy`); // a range inside a larger buffer, as in a request body
    return table.getFolded(b, 2, b.length - 2);
  };

  test('every key is found from its bytes in any ASCII casing, with its own list', () => {
    for (const k of keys) {
      expect(at(k)).toEqual(list(k));
      expect(at(k.toUpperCase().replace('É', 'é'))).toEqual(list(k));
      expect(table.get(k)).toEqual(list(k));
    }
    expect(table.size).toBe(keys.length);
  });

  test('near misses are not found: a prefix, an extension, another character, non-ASCII folded', () => {
    for (const k of keys.slice(0, 200)) {
      expect(at(k.slice(0, -1))).toBeUndefined();
      expect(at(`${k}0`)).toBeUndefined();
      expect(at(`${k.slice(0, -1)}~`)).toBeUndefined();
    }
    expect(at('10.5555/É-unicode')).toBeUndefined(); // only ASCII letters fold, as in doiKey
    expect(at('')).toBeUndefined();
  });

  test('an empty table finds nothing', () => {
    const empty = UpdatesTable.of(new Map());
    const b = encoder.encode('10.1234/abc');
    expect(empty.getFolded(b, 0, b.length)).toBeUndefined();
    expect(empty.size).toBe(0);
  });
});
