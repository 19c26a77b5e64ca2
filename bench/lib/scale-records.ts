/**
 * The deposit records of the scale benchmark (issue 48), each a pure function of its index, so any file can be
 * written again, and any held DOI named, without keeping DOIs in memory (100M of them would not fit):
 * - record p (0, 1, 2, ...) is one distinct DOI; its registrant prefix is one of 2,000, uniformly at random (a hash
 *   of p), and its suffix carries a 40-bit bijective scramble of p, so within a prefix the DOIs fall in random
 *   order too: a shuffled backlist, every record a random put into the store's B-tree;
 * - 50% paid, 1/6 each open, free and permFree; vor links (one PDF link) on 75%.
 */

export const PLATFORM_COUNT = 20;
export const PREFIX_COUNT = 2000;

/** The 20 platforms: `platform01` ... `platform20` (each file comes from one). */
export const SCALE_PLATFORMS = Array.from(
  { length: PLATFORM_COUNT },
  (_, i) => `platform${String(i + 1).padStart(2, '0')}`,
);

/** A bijective 32-bit mixer (the murmur3 finaliser). */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const HALF = 2 ** 20;
const ROUND_KEYS = [0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c];

/** A bijection of [0, 2^40): four Feistel rounds over 20-bit halves. Distinct p, distinct results. */
export function scramble(p: number): number {
  let l = Math.floor(p / HALF) % HALF;
  let r = p % HALF;
  for (const k of ROUND_KEYS) {
    const f = mix32(r ^ k) % HALF;
    [l, r] = [r, l ^ f];
  }
  return l * HALF + r;
}

/** The registrant of prefix i: 4 or 5 digits, distinct for every i < 90,000. */
const registrant = (i: number) => 1000 + ((i * 7919) % 90000);

/** The DOI of record p: `10.<registrant>/<suffix>`, four suffix styles (one with upper case, as Elsevier PIIs). */
export function doiOf(p: number): string {
  const s = scramble(p);
  const prefix = mix32(p ^ 0x5bd1e995) % PREFIX_COUNT;
  const id = s.toString(36).padStart(8, '0');
  const journal = mix32(s % 0x7fffffff) % 40;
  const year = 1960 + (Math.floor(s / 4096) % 66);
  const reg = registrant(prefix);
  switch (prefix % 4) {
    case 0:
      return `10.${reg}/j.jrnl${journal}.${year}.${id}`;
    case 1:
      return `10.${reg}/s${10000 + journal * 211}-${year}-${id}`;
    case 2:
      return `10.${reg}/${year}.${journal}.${id}`;
    default:
      return `10.${reg}/S${String(1400 + journal * 37).padStart(4, '0')}-${year}(${String(year % 100).padStart(2, '0')})${id.toUpperCase()}`;
  }
}

export type AccessType = 'paid' | 'open' | 'free' | 'permFree';

/** Record p's access type: 50% paid, 1/6 each open, free, permFree. */
export function accessOf(p: number): AccessType {
  const r = mix32(p ^ 0x27d4eb2f) % 6;
  return r < 3 ? 'paid' : r === 3 ? 'open' : r === 4 ? 'free' : 'permFree';
}

/** Whether record p carries vor links: 75%. */
export const hasVor = (p: number) => mix32(p ^ 0x165667b1) % 4 !== 0;

/** Record p's deposit line, as deposited by `platform`. */
export function recordLine(p: number, platform: string): string {
  const doi = doiOf(p);
  const accessType = accessOf(p);
  if (!hasVor(p)) return JSON.stringify({ doi, accessType });
  return JSON.stringify({
    doi,
    accessType,
    vor: [{ url: `https://www.${platform}.example/doi/pdf/${doi}`, contentType: 'application/pdf' }],
  });
}
