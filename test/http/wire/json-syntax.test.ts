import { describe, expect, test } from 'bun:test';
import { firstJsonFault, positionOf } from '../../../src/http/wire/json-syntax.ts';

/** The scanner that says where an INVALID_JSON body stops being JSON (src/http/wire/json-syntax.ts). */

const bytes = (text: string) => new TextEncoder().encode(text);
const fault = (text: string) => {
  const b = bytes(text);
  const f = firstJsonFault(b);
  return f && `${positionOf(b, f.at)}: ${f.what}`;
};

describe('firstJsonFault', () => {
  test('names the position and the cause of the first syntax error', () => {
    expect(fault('{"dois":["10.1234/a"]} x')).toBe('line 1, column 24 (byte 23): unexpected "x" after the value');
    expect(fault('{"dois":["10.1234/a",]}')).toBe(
      'line 1, column 22 (byte 21): unexpected "]" after ",": a trailing comma is not allowed',
    );
    expect(fault('{"a":1,}')).toBe(
      'line 1, column 8 (byte 7): unexpected "}" after ",": a trailing comma is not allowed',
    );
    expect(fault('')).toBe('line 1, column 1 (byte 0): the body is empty');
    expect(fault(' \n')).toBe('line 2, column 1 (byte 2): the body holds only white space, no JSON value');
    expect(fault('{"dois":["10.1')).toBe(
      'line 1, column 15 (byte 14): unexpected end of the body in the string opened at line 1, column 10 (byte 9)',
    );
    expect(fault('["10.1234/\\q"]')).toMatch(/^line 1, column 11 \(byte 10\): bad escape "\\q" in a string/);
    expect(fault('["\\u12G4"]')).toMatch(/^line 1, column 3 \(byte 2\): bad escape "\\u12G4"/);
    expect(fault('["a\u0001"]')).toMatch(/^line 1, column 4 \(byte 3\): control character U\+0001 in a string/);
    expect(fault('{\n "a" 1}')).toBe('line 2, column 6 (byte 7): unexpected "1", expected ":" after the property name');
    expect(fault('{1:2}')).toBe('line 1, column 2 (byte 1): unexpected "1", expected a property name in double quotes');
    expect(fault('[1 2]')).toBe('line 1, column 4 (byte 3): unexpected "2", expected "," or "]"');
    expect(fault('[01]')).toBe('line 1, column 3 (byte 2): a number must not start with 0 followed by more digits');
    expect(fault('nul')).toBe('line 1, column 4 (byte 3): unexpected end of the body in "null"');
    expect(fault("['a']")).toBe('line 1, column 2 (byte 1): unexpected "\'", expected a value');
  });

  test('columns count characters, bytes count bytes; a leading byte order mark is skipped, not a fault', () => {
    expect(fault('["é", x]')).toBe('line 1, column 7 (byte 7): unexpected "x", expected a value');
    expect(fault('\ufeff{"dois":["10.1234/a"]}')).toBeUndefined();
    expect(fault('\ufeff[1,]')).toBe(
      'line 1, column 4 (byte 6): unexpected "]" after ",": a trailing comma is not allowed',
    );
    expect(fault('[1,\ufeff2]')).toBe('line 1, column 4 (byte 3): unexpected U+FEFF, expected a value');
  });

  test('deep nesting is scanned without overflowing the stack', () => {
    expect(fault('['.repeat(60_000) + ']'.repeat(60_000))).toBeUndefined();
    expect(fault('['.repeat(60_000))).toBe(
      'line 1, column 60001 (byte 60000): unexpected end of the body, expected a value',
    );
    expect(fault(`${'['.repeat(60_000)}1`)).toBe(
      'line 1, column 60002 (byte 60001): unexpected end of the body, expected "," or "]"',
    );
  });

  test('agrees with JSON.parse on which texts are JSON (random edits of valid bodies)', () => {
    const seeds = [
      '{"dois":["10.1234/a","10.5/\\u00e9\\n"],"org":{"ipv4":"1.2.3.4","n":-1.5e+3}}',
      '[true,false,null,0,-0.0,1E9,"\\"\\\\\\/"]',
      '{"a":{"b":[[],{}]}}',
    ];
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'u',
      '0',
      '1',
      '-',
      '.',
      'e',
      '+',
      ' ',
      '\n',
      't',
      'n',
      'x',
      '\u0001',
      'é',
    ];
    let state = 12345;
    const rand = (n: number) => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % n;
    for (let round = 0; round < 20_000; round++) {
      const chars = [...seeds[rand(seeds.length)]!];
      for (let edits = 1 + rand(3); edits > 0; edits--) {
        const at = rand(chars.length + 1);
        const kind = rand(3);
        if (kind === 0) chars.splice(at, 1);
        else if (kind === 1) chars.splice(at, 0, alphabet[rand(alphabet.length)]!);
        else chars[at] = alphabet[rand(alphabet.length)]!;
      }
      const text = chars.join('');
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect([text, fault(text) === undefined]).toEqual([text, valid]);
    }
  });
});
