/**
 * The general DOI rule and the DOI key (docs/interface.md, "Depositing holdings"; docs/design.md, "Store layout").
 * Deposits must use the bare `10.` form; the APIs also accept `doi:` and `https://doi.org/` forms, which
 * `normaliseDoiInput` strips. The fast path for plain ASCII DOIs (plain.ts) is held to this rule by its tests.
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

function codePoint(ch: string): string {
  return ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}
