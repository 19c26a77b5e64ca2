/**
 * Where a request body stops being JSON (RFC 8259), for the INVALID_JSON message: the engine's JSON.parse error
 * names no position. Run only after JSON.parse has failed, so valid bodies never pay for it.
 */

import { JsonPunctuation } from '../../bytes/index.ts';

const { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } = JsonPunctuation;

const LINE_FEED = 0x0a;
const ESCAPABLE = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));
// keeps a byte order mark: one shown in a message is a character like any other
const text8 = new TextDecoder('utf-8', { ignoreBOM: true });
const LITERALS = new Map([...['true', 'false', 'null']].map((w) => [w.charCodeAt(0), w]));

/** The first syntax error of `b`: its byte offset and what is wrong there. */
interface JsonFault {
  at: number;
  what: string;
}

/**
 * The first syntax error of the UTF-8 JSON text `b` (a leading byte order mark skipped, as the body reader does),
 * or undefined when there is none. Iterative, so deep nesting cannot overflow the stack.
 */
export function firstJsonFault(b: Uint8Array): JsonFault | undefined {
  const n = b.length;
  const start = bomLength(b);
  const open: number[] = []; // the containers the scan is inside, innermost last
  let i = skipSpace(b, start);
  if (i >= n)
    return { at: i, what: i === start ? 'the body is empty' : 'the body holds only white space, no JSON value' };
  let expectValue = true;
  for (;;) {
    i = skipSpace(b, i);
    if (expectValue) {
      if (i >= n) return { at: i, what: 'unexpected end of the body, expected a value' };
      const c = b[i]!;
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        const close = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
        i = skipSpace(b, i + 1);
        if (b[i] === close) {
          i++;
          expectValue = false;
          continue;
        }
        open.push(c);
        if (c === OPEN_BRACE) {
          const r = propertyName(b, i);
          if (typeof r !== 'number') return r;
          i = r;
        }
        continue;
      }
      const r =
        c === QUOTE
          ? stringEnd(b, i)
          : c === 0x2d || isDigit(c)
            ? numberEnd(b, i)
            : LITERALS.has(c)
              ? literalEnd(b, i, LITERALS.get(c)!)
              : { at: i, what: `unexpected ${shown(b, i)}, expected a value` };
      if (typeof r !== 'number') return r;
      i = r;
      expectValue = false;
      continue;
    }
    const inside = open[open.length - 1];
    if (inside === undefined) return i >= n ? undefined : { at: i, what: `unexpected ${shown(b, i)} after the value` };
    const close = inside === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
    if (b[i] === close) {
      open.pop();
      i++;
    } else if (b[i] === COMMA) {
      i = skipSpace(b, i + 1);
      if (b[i] === close)
        return { at: i, what: `unexpected ${shown(b, i)} after ",": a trailing comma is not allowed` };
      if (inside === OPEN_BRACE) {
        const r = propertyName(b, i);
        if (typeof r !== 'number') return r;
        i = r;
      }
      expectValue = true;
    } else return { at: i, what: `unexpected ${shown(b, i)}, expected "," or "${String.fromCharCode(close)}"` };
  }
}

/** "line L, column C (byte B)" of offset `at`: lines end at a line feed; a column counts characters, not bytes. */
export function positionOf(b: Uint8Array, at: number): string {
  let line = 1;
  let lineStart = bomLength(b);
  for (let k = lineStart; k < at && k < b.length; k++)
    if (b[k] === LINE_FEED) {
      line++;
      lineStart = k + 1;
    }
  let column = 1;
  for (let k = lineStart; k < at && k < b.length; k++) if ((b[k]! & 0xc0) !== 0x80) column++; // not a continuation byte
  return `line ${line}, column ${column} (byte ${at})`;
}

/** A property name and its colon from b[i]; returns where its value may start. */
function propertyName(b: Uint8Array, i: number): number | JsonFault {
  if (b[i] !== QUOTE) return { at: i, what: `unexpected ${shown(b, i)}, expected a property name in double quotes` };
  const end = stringEnd(b, i);
  if (typeof end !== 'number') return end;
  const colon = skipSpace(b, end);
  if (b[colon] !== COLON)
    return { at: colon, what: `unexpected ${shown(b, colon)}, expected ":" after the property name` };
  return colon + 1;
}

/** One past the closing quote of the string opening at b[i]. */
function stringEnd(b: Uint8Array, i: number): number | JsonFault {
  for (let k = i + 1; k < b.length; k++) {
    const c = b[k]!;
    if (c === QUOTE) return k + 1;
    if (c < 0x20) return { at: k, what: `control character ${shown(b, k)} in a string: escape it (\\n, \\t, \\u00XX)` };
    if (c !== BACKSLASH) continue;
    const e = b[k + 1];
    if (e === undefined) break;
    if (ESCAPABLE.has(e)) k++;
    else if (e === 0x75 && [2, 3, 4, 5].every((d) => isHex(b[k + d]))) k += 5;
    else {
      const text = text8.decode(b.subarray(k, Math.min(b.length, k + (e === 0x75 ? 6 : 2))));
      return {
        at: k,
        what: `bad escape "${text}" in a string: only \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\u with four hex digits`,
      };
    }
  }
  return { at: b.length, what: `unexpected end of the body in the string opened at ${positionOf(b, i)}` };
}

/** One past the number starting at b[i] (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?). */
function numberEnd(b: Uint8Array, i: number): number | JsonFault {
  let k = b[i] === 0x2d ? i + 1 : i;
  if (!isDigit(b[k])) return { at: k, what: `unexpected ${shown(b, k)}, expected a digit after "-"` };
  if (b[k] === 0x30 && isDigit(b[k + 1]))
    return { at: k + 1, what: 'a number must not start with 0 followed by more digits' };
  while (isDigit(b[k])) k++;
  if (b[k] === 0x2e) {
    if (!isDigit(b[++k])) return { at: k, what: `unexpected ${shown(b, k)}, expected a digit after "."` };
    while (isDigit(b[k])) k++;
  }
  if (b[k] === 0x65 || b[k] === 0x45) {
    if (b[++k] === 0x2b || b[k] === 0x2d) k++;
    if (!isDigit(b[k])) return { at: k, what: `unexpected ${shown(b, k)}, expected a digit in the exponent` };
    while (isDigit(b[k])) k++;
  }
  return k;
}

/** One past `true`, `false` or `null` at b[i]. */
function literalEnd(b: Uint8Array, i: number, word: string): number | JsonFault {
  for (let d = 1; d < word.length; d++)
    if (b[i + d] !== word.charCodeAt(d)) return { at: i + d, what: `unexpected ${shown(b, i + d)} in "${word}"` };
  return i + word.length;
}

/** The character at b[i] for a message: printable ASCII quoted, anything else as U+XXXX. */
function shown(b: Uint8Array, i: number): string {
  if (i >= b.length) return 'end of the body';
  const c = b[i]!;
  if (c >= 0x20 && c < 0x7f) return JSON.stringify(String.fromCharCode(c));
  const ch = c < 0x80 ? c : text8.decode(b.subarray(i, i + 4)).codePointAt(0)!;
  return `U+${ch.toString(16).toUpperCase().padStart(4, '0')}`;
}

function bomLength(b: Uint8Array): number {
  return b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
}

/** JSON's white space: space, tab, line feed, carriage return. */
function skipSpace(b: Uint8Array, i: number): number {
  for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
  return i;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66));
}
