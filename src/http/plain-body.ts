const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const DOIS_KEY = [QUOTE, 0x64, 0x6f, 0x69, 0x73, QUOTE]; // "dois"

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
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_BRACE) return -1;
  i = skipSpace(b, i + 1);
  for (let k = 0; k < DOIS_KEY.length; k++) if (b[i + k] !== DOIS_KEY[k]) return -1;
  i = skipSpace(b, i + DOIS_KEY.length);
  if (b[i] !== COLON) return -1;
  i = skipSpace(b, i + 1);
  if (b[i] !== OPEN_BRACKET) return -1;
  i = skipSpace(b, i + 1);
  let count = 0;
  for (;;) {
    if (b[i] !== QUOTE || count === max) return -1;
    const start = ++i;
    for (let c = b[i]; c !== QUOTE; c = b[++i]) if (c === undefined || c < 0x20 || c >= 0x7f || c === BACKSLASH) return -1;
    spans[2 * count] = start;
    spans[2 * count + 1] = i;
    count++;
    i = skipSpace(b, i + 1);
    if (b[i] === CLOSE_BRACKET) break;
    if (b[i] !== COMMA) return -1;
    i = skipSpace(b, i + 1);
  }
  i = skipSpace(b, i + 1);
  if (b[i] !== CLOSE_BRACE) return -1;
  return skipSpace(b, i + 1) === b.length ? count : -1;
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function skipSpace(b: Uint8Array, i: number): number {
  for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
  return i;
}
