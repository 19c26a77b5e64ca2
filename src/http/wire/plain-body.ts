import { JsonPunctuation } from '../../bytes/index.ts';
import {
  FOLDED_HASH_SEED,
  foldedHashEnd,
  foldedHashStep,
  isPlainByte,
  NOT_PLAIN,
  plainDoiHashOfChecked,
} from '../../doi/index.ts';

const { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } = JsonPunctuation;

const DOIS_KEY = [QUOTE, 0x64, 0x6f, 0x69, 0x73, QUOTE]; // "dois"
const ORG_KEY = [QUOTE, 0x6f, 0x72, 0x67, QUOTE]; // "org"
/**
 * STRING_BYTE[c]: 0 for a byte that ends a plain string (its closing quote) or that no plain string holds
 * (controls, DEL, non-ASCII, a backslash: escapes take the general path); else 1 when a plain DOI may hold it
 * too (src/doi/plain.ts), 2 when not (the space).
 */
const STRING_BYTE = new Uint8Array(256);
for (let c = 0x20; c < 0x7f; c++) if (c !== QUOTE && c !== BACKSLASH) STRING_BYTE[c] = isPlainByte(c) ? 1 : 2;

/**
 * Recognises an Updates API body in the plain shape integrators send: `{"dois":["…","…"]}` with any JSON
 * whitespace and 1 to `max` strings of printable ASCII without escapes. Writes each string's byte range (inside
 * the quotes) into `spans` as start, end pairs and returns how many there are; returns -1 for any other body
 * (escapes, non-ASCII, other keys or value types, too many or no DOIs, invalid JSON), which the route then
 * parses in full and checks against the request schema. So this never rejects a body: it only recognises
 * bodies that are plainly valid, and a body it recognises means exactly what JSON.parse would make of it.
 * Whether each string is a DOI is not decided here: that is the DOI rule's (src/doi/), per entry.
 */
export function scanPlainBody(b: Uint8Array, spans: Int32Array, max: number): number {
  return scanBody(b, spans, max, undefined);
}

/**
 * scanPlainBody for the Entitlement API: the body may also have an `"org"` member (before or after `"dois"`)
 * whose value is an object; its byte range, braces included, goes into `org` (-1, -1 when absent). Its inside is
 * not checked here: the route parses that slice, and takes the general path when it is not valid JSON. Each
 * string's plainDoiHash goes into `hashes` (NOT_PLAIN for a string that is not a plain DOI), made as its bytes are
 * read: the route then reads no DOI's bytes again until its lookup compares them.
 */
export function scanEntitlementBody(
  b: Uint8Array,
  spans: Int32Array,
  max: number,
  org: Int32Array,
  hashes: Int32Array,
): number {
  org[0] = org[1] = -1;
  return scanBody(b, spans, max, org, hashes);
}

function scanBody(
  b: Uint8Array,
  spans: Int32Array,
  max: number,
  org: Int32Array | undefined,
  hashes?: Int32Array,
): number {
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_BRACE) return -1;
  let count = -1;
  for (;;) {
    i = skipSpace(b, i + 1);
    if (startsWith(b, i, DOIS_KEY) && count < 0) {
      i = skipSpace(b, i + DOIS_KEY.length);
      if (b[i] !== COLON) return -1;
      i = skipSpace(b, i + 1);
      if (b[i] !== OPEN_BRACKET) return -1;
      i = skipSpace(b, i + 1);
      count = 0;
      for (;;) {
        if (b[i] !== QUOTE || count === max) return -1;
        const start = ++i;
        i = hashes ? hashedStringEnd(b, start) : stringEnd(b, start);
        if (i < 0) return -1;
        if (hashes) hashes[count] = stringHash;
        spans[2 * count] = start;
        spans[2 * count + 1] = i;
        count++;
        i = skipSpace(b, i + 1);
        if (b[i] === CLOSE_BRACKET) break;
        if (b[i] !== COMMA) return -1;
        i = skipSpace(b, i + 1);
      }
    } else if (org && org[0]! < 0 && startsWith(b, i, ORG_KEY)) {
      i = skipSpace(b, i + ORG_KEY.length);
      if (b[i] !== COLON) return -1;
      i = skipSpace(b, i + 1);
      const end = objectEnd(b, i);
      if (end < 0) return -1;
      org[0] = i;
      org[1] = end;
      i = end - 1;
    } else return -1;
    i = skipSpace(b, i + 1);
    if (b[i] === CLOSE_BRACE) break;
    if (b[i] !== COMMA) return -1;
  }
  if (count < 0) return -1;
  return skipSpace(b, i + 1) === b.length ? count : -1;
}

/** Where the plain string whose inside starts at b[start] ends (its closing quote), or -1 when it is not plain. */
function stringEnd(b: Uint8Array, start: number): number {
  const n = b.length;
  let i = start;
  while (i < n && STRING_BYTE[b[i]!] !== 0) i++;
  return i < n && b[i] === QUOTE ? i : -1;
}

/** stringEnd, and the string's plainDoiHash in stringHash, from the one read of its bytes. */
function hashedStringEnd(b: Uint8Array, start: number): number {
  const n = b.length;
  let h = FOLDED_HASH_SEED;
  let kinds = 0;
  let i = start;
  for (; i < n; i++) {
    const c = b[i]!;
    const kind = STRING_BYTE[c]!;
    if (kind === 0) break;
    kinds |= kind;
    h = foldedHashStep(h, c);
  }
  if (i >= n || b[i] !== QUOTE) return -1;
  stringHash = kinds & 2 ? NOT_PLAIN : plainDoiHashOfChecked(b, start, i, foldedHashEnd(h));
  return i;
}
let stringHash = NOT_PLAIN;

/** Where the object starting at b[i] (a `{`) ends, one past its `}`, following strings and nesting; -1 if it does not. */
function objectEnd(b: Uint8Array, i: number): number {
  if (b[i] !== OPEN_BRACE) return -1;
  let depth = 0;
  for (; i < b.length; i++) {
    const c = b[i];
    if (c === QUOTE) {
      for (i++; i < b.length && b[i] !== QUOTE; i++) if (b[i] === BACKSLASH) i++;
      if (i >= b.length) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return c === CLOSE_BRACE ? i + 1 : -1;
    }
  }
  return -1;
}

function startsWith(b: Uint8Array, i: number, key: readonly number[]): boolean {
  for (let k = 0; k < key.length; k++) if (b[i + k] !== key[k]) return false;
  return true;
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function skipSpace(b: Uint8Array, i: number): number {
  for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
  return i;
}
