/**
 * DOI syntax and keys (DESIGN section 3 and 4). Deposits must use the bare `10.` form; the APIs also accept
 * `doi:` and `https://doi.org/` forms, which `normaliseDoiInput` strips.
 */

export const MAX_DOI_BYTES = 1024;

const DOI_SHAPE = /^10\.[0-9]{4,9}\/./s;
// Whitespace (Z), control (Cc) and format (Cf) characters are never part of a DOI: NBSP, U+2028, U+FEFF, U+200B...
const FORBIDDEN = /[\p{Z}\p{Cc}\p{Cf}]/u;

export type DoiProblem = 'not a DOI: expected 10.<4-9 digit registrant>/<suffix>' | string;

/** Returns why `doi` is not an acceptable bare DOI, or undefined when it is. */
export function doiProblem(doi: string): DoiProblem | undefined {
  if (!DOI_SHAPE.test(doi)) return 'not a DOI: expected 10.<4-9 digit registrant>/<non-empty suffix>';
  if (!doi.isWellFormed()) return 'contains a lone UTF-16 surrogate';
  const bad = FORBIDDEN.exec(doi);
  if (bad) return `contains a whitespace, control or format character (U+${codePoint(bad[0])}) at index ${bad.index}`;
  if (doi.length * 3 > MAX_DOI_BYTES && Buffer.byteLength(doi, 'utf8') > MAX_DOI_BYTES)
    return `longer than ${MAX_DOI_BYTES} bytes in UTF-8`;
  return undefined;
}

/** The store key of a DOI: ASCII letters lower-cased, nothing else folded. */
export function doiKey(doi: string): string {
  return HAS_UPPER.test(doi) ? doi.replace(UPPER_RUNS, (s) => s.toLowerCase()) : doi;
}
const HAS_UPPER = /[A-Z]/;
const UPPER_RUNS = /[A-Z]+/g;

const PREFIXES = [/^doi:\s*/i, /^https?:\/\/(dx\.)?doi\.org\//i];

/** API input: accepts `doi:10...`, `https://doi.org/10...` and bare forms; returns the bare DOI. */
export function normaliseDoiInput(input: string): string {
  let s = input.trim();
  for (const p of PREFIXES) s = s.replace(p, '');
  return s;
}

/**
 * The API's fast path for the common input, a bare printable-ASCII DOI without `"` or `\`: one pass over the
 * characters that both validates it (same rule as normaliseDoiInput + doiProblem) and lower-cases it into its
 * key; such a DOI is also its own JSON string body. Returns undefined for anything else (prefixed forms, spaces,
 * non-ASCII, characters JSON escapes, invalid), which then takes the general path.
 */
export function quickDoiKey(input: string): string | undefined {
  const n = input.length;
  if (n < 9 || n > MAX_DOI_BYTES || input.charCodeAt(0) !== 0x31 || input.charCodeAt(1) !== 0x30 || input.charCodeAt(2) !== 0x2e) return undefined;
  let i = 3;
  while (i < n && input.charCodeAt(i) >= 0x30 && input.charCodeAt(i) <= 0x39) i++;
  const digits = i - 3;
  if (digits < 4 || digits > 9 || i + 1 >= n || input.charCodeAt(i) !== 0x2f) return undefined;
  let upper = false;
  for (let j = i + 1; j < n; j++) {
    const c = input.charCodeAt(j);
    // quote and backslash are valid DOI characters but need escaping in JSON: left to the general path
    if (c <= 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return undefined;
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  // printable ASCII only here, so toLowerCase folds exactly the ASCII letters (doiKey), natively
  return upper ? input.toLowerCase() : input;
}

function codePoint(ch: string): string {
  return ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/**
 * The first half of quickDoiKey's rule on UTF-8 bytes `b[start, end)`: the length bound and the `10.<4-9
 * digits>/` prefix with a non-empty suffix. Returns where the suffix starts, or -1. The caller checks the suffix
 * bytes itself (each 0x21-0x7E, neither `"` nor `\`) while it passes over them anyway: the Updates API copies
 * and hashes them in the same loop.
 */
export function quickDoiSuffixStart(b: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n < 9 || n > MAX_DOI_BYTES || b[start] !== 0x31 || b[start + 1] !== 0x30 || b[start + 2] !== 0x2e) return -1;
  let i = start + 3;
  while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  const digits = i - start - 3;
  return digits < 4 || digits > 9 || i + 1 >= end || b[i] !== 0x2f ? -1 : i + 1;
}
