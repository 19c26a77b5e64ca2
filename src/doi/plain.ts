import { MAX_DOI_BYTES } from './rules.ts';

/**
 * The fast path for the DOIs nearly every deposit and request carries: a *plain* DOI is a bare DOI of printable
 * ASCII without `"` or `\` (`10.` + 4-9 digits + `/` + a non-empty suffix of bytes 0x21-0x7E other than those
 * two). For such a DOI one pass over its characters or bytes both validates it (the general rule of rules.ts
 * accepts exactly these among ASCII inputs) and folds it into its key; it is also its own JSON string body.
 * Anything else (prefixed forms, spaces, non-ASCII, characters JSON escapes, invalid) is declined and takes the
 * general path. test/doi/plain.test.ts holds every function here to the general rule.
 */

/** PLAIN_BYTE[c] is 1 when byte c may stand in a plain DOI. */
const PLAIN_BYTE = new Uint8Array(256);
/** ASCII_FOLD[c] is c with ASCII letters lower-cased: the DOI key's folding (doiKey), on bytes. */
const ASCII_FOLD = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  PLAIN_BYTE[c] = c >= 0x21 && c <= 0x7e && c !== 0x22 && c !== 0x5c ? 1 : 0;
  ASCII_FOLD[c] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
}

/** What copyPlainDoi returns for an input that is not a plain DOI (hashes are never negative). */
export const NOT_PLAIN = -1;

/** The key of `input` when it is a plain DOI (validated and folded in one pass); undefined otherwise. */
export function plainDoiKey(input: string): string | undefined {
  const n = input.length;
  if (suffixStartOfString(input) < 0) return undefined;
  let upper = false;
  for (let i = 0; i < n; i++) {
    const c = input.charCodeAt(i);
    if (c > 0x7e || PLAIN_BYTE[c] === 0) return undefined;
    if (ASCII_FOLD[c] !== c) upper = true;
  }
  // printable ASCII only here, so toLowerCase folds exactly the ASCII letters, natively
  return upper ? input.toLowerCase() : input;
}

/**
 * When the UTF-8 bytes b[start, end) are a plain DOI: copies them to out[at, at + (end - start)) and returns
 * their folded hash (the hash of the DOI's key, as foldedHash computes it), all in one pass. Returns NOT_PLAIN
 * otherwise, having written nothing that counts (bytes past `at` may have been overwritten). The Updates API
 * copies a DOI into its reply and looks it up this way without making a string of it.
 */
export function copyPlainDoi(b: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  if (suffixStartOfBytes(b, start, end) < 0) return NOT_PLAIN;
  let h = FOLDED_HASH_SEED;
  for (let k = start; k < end; k++) {
    const c = b[k]!;
    if (PLAIN_BYTE[c] === 0) return NOT_PLAIN;
    out[at++] = c;
    h = foldedHashStep(h, c);
  }
  return foldedHashEnd(h);
}

/**
 * copyPlainDoi without the copy: the folded hash of b[start, end) when it is a plain DOI, else NOT_PLAIN. The rule
 * in one function: the readers that hash as they scan (plainDoiHashOfChecked) are tested against it.
 */
export function plainDoiHash(b: Uint8Array, start: number, end: number): number {
  if (suffixStartOfBytes(b, start, end) < 0) return NOT_PLAIN;
  let h = FOLDED_HASH_SEED;
  for (let k = start; k < end; k++) {
    const c = b[k]!;
    if (PLAIN_BYTE[c] === 0) return NOT_PLAIN;
    h = foldedHashStep(h, c);
  }
  return foldedHashEnd(h);
}

/**
 * plainDoiHash for b[start, end) whose bytes a reader has already checked to be plain-DOI bytes (0x21-0x7E
 * but `"` and `\`) and hashed as it read them (`hash`, their foldedHash): what is left is the prefix and length
 * rule. The Entitlement API's body scanner (src/http/wire/plain-body.ts) reads each DOI once so.
 */
export function plainDoiHashOfChecked(b: Uint8Array, start: number, end: number, hash: number): number {
  return suffixStartOfBytes(b, start, end) < 0 ? NOT_PLAIN : hash;
}

/** PLAIN_BYTE[c] === 1 (a byte a plain DOI may hold), for a reader that checks bytes itself. */
export function isPlainByte(c: number): boolean {
  return PLAIN_BYTE[c] === 1;
}

/**
 * FNV-1a over b[start, end) with ASCII letters folded, so a DOI key and any ASCII casing of it hash alike;
 * 31 bits, never negative. The hash of the Updates API's lookup table (store/updates/updates-table.ts).
 */
export function foldedHash(b: Uint8Array, start: number, end: number): number {
  let h = FOLDED_HASH_SEED;
  for (let k = start; k < end; k++) h = foldedHashStep(h, b[k]!);
  return foldedHashEnd(h);
}

/*
 * foldedHash one byte at a time, for a reader that hashes bytes as it reads them: h = FOLDED_HASH_SEED, then
 * h = foldedHashStep(h, byte) for each byte, and foldedHashEnd(h) is the hash. Every hash of a DOI key is made so.
 */
export const FOLDED_HASH_SEED = 0x811c9dc5 | 0;
const HASH_PRIME = 0x01000193;

/** The hash so far, h, with byte c (folded) taken in. */
export function foldedHashStep(h: number, c: number): number {
  return Math.imul(h ^ ASCII_FOLD[c]!, HASH_PRIME);
}

/** The hash from the last step's h: 31 bits, never negative. */
export function foldedHashEnd(h: number): number {
  return h & 0x7fffffff;
}

/** Byte c folded as the DOI key folds it. */
export function foldByte(c: number): number {
  return ASCII_FOLD[c]!;
}

/*
 * The length bound and the `10.<4-9 digits>/` prefix with a non-empty suffix after it; each returns where the
 * suffix starts, or -1. One rule written for the two representations it is read from (a generic version that
 * takes either costs the Updates API ~20% per answer, measured): the tests hold both to rules.ts.
 */
function suffixStartOfString(s: string): number {
  const n = s.length;
  if (n < 9 || n > MAX_DOI_BYTES || s.charCodeAt(0) !== 0x31 || s.charCodeAt(1) !== 0x30 || s.charCodeAt(2) !== 0x2e)
    return -1;
  let i = 3;
  while (i < n && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39) i++;
  return i - 3 < 4 || i - 3 > 9 || i + 1 >= n || s.charCodeAt(i) !== 0x2f ? -1 : i + 1;
}

function suffixStartOfBytes(b: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n < 9 || n > MAX_DOI_BYTES || b[start] !== 0x31 || b[start + 1] !== 0x30 || b[start + 2] !== 0x2e) return -1;
  let i = start + 3;
  while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  return i - start - 3 < 4 || i - start - 3 > 9 || i + 1 >= end || b[i] !== 0x2f ? -1 : i + 1;
}
