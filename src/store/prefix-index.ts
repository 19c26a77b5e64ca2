import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { feedHead, liveRows } from './change-feed.ts';
import type { StoreDbs } from './environment.ts';

/**
 * The private lookup (docs/design.md, "Private lookup"): the SHA-256 hashes of the DOI keys of every work with
 * updates, so that a client asks about a hash prefix and never sends a DOI. Built from the change feed's live
 * rows (their hash and item are stored there) and rebuilt when the feed moves.
 */

/** a prefix is made as long as it can be while the works with updates still average this many per prefix */
export const MIN_WORKS_PER_PREFIX = 4;
const MAX_PREFIX_LENGTH = 16;

/** The prefix list as served: its JSON, gzipped once, and an ETag of its content. */
export interface PrefixList {
  json: Uint8Array;
  gzip: Uint8Array;
  etag: string;
  prefixLength: number;
  works: number;
}

/** The hex prefix length for `works` works with updates (each prefix stands for MIN_WORKS_PER_PREFIX of them on average). */
export function prefixLengthFor(works: number): number {
  let length = 1;
  while (length < MAX_PREFIX_LENGTH && works / 16 ** (length + 1) >= MIN_WORKS_PER_PREFIX) length++;
  return length;
}

export class PrefixIndex {
  /** the feed state this index was built from */
  readonly stamp: string;
  /** hashes in ascending order, and each one's item (`{"doi":..., "updates": [...]}`) */
  private readonly hashes: string[];
  private readonly items: string[];
  readonly list: PrefixList;

  constructor(dbs: StoreDbs) {
    this.stamp = stampOf(dbs);
    const items: string[] = [];
    const order: string[] = [];
    for (const row of liveRows(dbs)) order.push(row[2] + String(items.push(row[3]) - 1));
    // hash (64 hex digits) then the item's index: the default sort compares plain strings (a comparator
    // function made it ten times slower: 1.9 s for 300,000 works)
    order.sort();
    this.hashes = order.map((o) => o.slice(0, 64));
    this.items = order.map((o) => items[Number(o.slice(64))]!);
    this.list = listOf(this.hashes);
  }

  get prefixLength(): number {
    return this.list.prefixLength;
  }

  /** Every work whose hash starts with one of `prefixes` (lower-case hex), once each, in hash order, as JSON text. */
  lookup(prefixes: readonly string[]): string[] {
    const found = new Map<number, string>();
    for (const p of prefixes) {
      for (let i = lowerBound(this.hashes, p); i < this.hashes.length && this.hashes[i]!.startsWith(p); i++) {
        found.set(i, `{"hash":"${this.hashes[i]}",${this.items[i]!.slice(1)}`);
      }
    }
    return [...found.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  }
}

/** What the index depends on: the feed's head (any commit that changed the feed, or pruned it, moves it). */
export function stampOf(dbs: StoreDbs): string {
  const h = feedHead(dbs);
  return `${h.commit}.${h.seq}.${h.prunedThrough}`;
}

function listOf(hashes: readonly string[]): PrefixList {
  const prefixLength = prefixLengthFor(hashes.length);
  const prefixes: string[] = [];
  for (const h of hashes) {
    const p = h.slice(0, prefixLength);
    if (prefixes[prefixes.length - 1] !== p) prefixes.push(p);
  }
  const text = `{"algorithm":"sha256","of":"doi-key","prefixLength":${prefixLength},"works":${hashes.length},"prefixes":${JSON.stringify(prefixes)}}`;
  const json = new TextEncoder().encode(text);
  return {
    json,
    gzip: gzipSync(json, { level: 9 }),
    etag: `"${createHash('sha256').update(json).digest('hex').slice(0, 32)}"`,
    prefixLength,
    works: hashes.length,
  };
}

function lowerBound(sorted: readonly string[], p: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
