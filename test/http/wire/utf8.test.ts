import { describe, expect, test } from 'bun:test';
import { firstInvalidUtf8, utf8Text } from '../../../src/http/wire/utf8.ts';

/** Strict UTF-8 for request bodies (src/http/wire/utf8.ts). */

const strict = new TextDecoder('utf-8', { fatal: true });
const isUtf8 = (b: Uint8Array) => {
  try {
    strict.decode(b);
    return true;
  } catch {
    return false;
  }
};

describe('firstInvalidUtf8', () => {
  test('names the first byte of the first invalid sequence', () => {
    const at = (...bytes: number[]) => firstInvalidUtf8(new Uint8Array(bytes));
    expect(at(0x61, 0xc3, 0xa9, 0x62)).toBe(-1); // "aéb"
    expect(at(0xef, 0xbf, 0xbd)).toBe(-1); // U+FFFD itself is text
    expect(at(0xf0, 0x9f, 0x98, 0x80)).toBe(-1); // U+1F600
    expect(at(0x61, 0xff)).toBe(1);
    expect(at(0x61, 0x80)).toBe(1); // a stray continuation byte
    expect(at(0x61, 0x62, 0xc3)).toBe(2); // cut short at the end
    expect(at(0xc3, 0x28)).toBe(0);
    expect(at(0xc0, 0xaf)).toBe(0); // overlong "/"
    expect(at(0xe0, 0x80, 0xaf)).toBe(0); // overlong
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // an encoded surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
  });

  test('agrees with a fatal TextDecoder on random bytes, and utf8Text with both', () => {
    let state = 7;
    const rand = (n: number) => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % n;
    const pieces = [
      [0x61],
      [0xc3, 0xa9],
      [0xe2, 0x82, 0xac],
      [0xf0, 0x9f, 0x98, 0x80],
      [0x80],
      [0xbf],
      [0xc0],
      [0xc2],
      [0xe0, 0xa0],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90],
      [0xf5],
      [0xff],
      [0xef, 0xbb, 0xbf],
    ];
    for (let round = 0; round < 20_000; round++) {
      const bytes: number[] = [];
      for (let k = rand(6); k >= 0; k--) bytes.push(...(rand(4) === 0 ? [rand(256)] : pieces[rand(pieces.length)]!));
      const b = new Uint8Array(bytes);
      expect([bytes, firstInvalidUtf8(b) < 0]).toEqual([bytes, isUtf8(b)]);
      expect([bytes, utf8Text(b) !== undefined]).toEqual([bytes, isUtf8(b)]);
    }
  });
});
