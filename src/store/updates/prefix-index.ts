import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { StoreDbs } from '../environment/index.ts';
import type { StoreRead } from '../read-models/index.ts';
import { feedHead, liveRows } from './change-feed.ts';

/**
 * The private lookup (docs/design.md, "Private lookup"): the SHA-256 hashes of the DOI keys of every work with
 * updates, so that a client asks about a hash prefix and never sends a DOI. Read from the change feed's live
 * rows (their hash and item are stored there) when the feed moves, into buffers that a worker thread can hand
 * over whole (ChangeFeedView reads it there once a read was slow).
 */

/** a prefix is made as long as it can be while the works with updates still average this many per prefix */
export const MIN_WORKS_PER_PREFIX = 4;
const MAX_PREFIX_LENGTH = 16;
const HASH_HEX = 64;

/** The prefix list as served: its JSON, gzipped once, and an ETag of its content. */
export interface PrefixList {
  json: Uint8Array;
  gzip: Uint8Array;
  etag: string;
  prefixLength: number;
  works: number;
}

/** A read index as buffers: what the worker sends back (its buffers transferred, not copied). */
export interface PrefixParts {
  /** the hashes in ascending order, 64 hex digits (ASCII) each */
  hashes: Uint8Array;
  /** each work's item (`{"doi":..., "updates": [...]}`) as UTF-8, in hash order; item i is itemStart[i]..[i+1] */
  items: Uint8Array;
  itemStart: Int32Array;
  list: PrefixList;
}

/** The hex prefix length for `works` works with updates (each prefix stands for MIN_WORKS_PER_PREFIX of them on average). */
export function prefixLengthFor(works: number): number {
  let length = 1;
  while (length < MAX_PREFIX_LENGTH && works / 16 ** (length + 1) >= MIN_WORKS_PER_PREFIX) length++;
  return length;
}

/** What the index depends on: the feed's head (any commit that changed the feed, or pruned it, moves it). */
export function stampOf(dbs: StoreDbs): string {
  const h = feedHead(dbs);
  return `${h.commit}.${h.seq}.${h.prunedThrough}`;
}

/** The one read of the index, on this thread or a worker: the feed's stamp first, then its live rows. */
export function readPrefixParts(dbs: StoreDbs): StoreRead<PrefixParts> {
  const started = performance.now();
  const version = stampOf(dbs);
  const items: string[] = [];
  const order: string[] = [];
  for (const row of liveRows(dbs)) order.push(row[2] + String(items.push(row[3]) - 1));
  // hash (64 hex digits) then the item's index: the default sort compares plain strings (a comparator
  // function made it ten times slower: 1.9 s for 300,000 works)
  order.sort();
  const hashes = new Uint8Array(order.length * HASH_HEX);
  const itemStart = new Int32Array(order.length + 1);
  let itemBytes: Uint8Array = new Uint8Array(1 << 16);
  let end = 0;
  for (let i = 0; i < order.length; i++) {
    const o = order[i]!;
    for (let k = 0; k < HASH_HEX; k++) hashes[i * HASH_HEX + k] = o.charCodeAt(k);
    const item = items[Number(o.slice(HASH_HEX))]!;
    if (itemBytes.length - end < item.length * 3) itemBytes = grown(itemBytes, end + item.length * 3);
    end += encoder.encodeInto(item, itemBytes.subarray(end)).written;
    itemStart[i + 1] = end;
  }
  const parts = { hashes, items: itemBytes.slice(0, end), itemStart, list: listOf(hashes) };
  return { value: parts, version, ms: performance.now() - started };
}

export class PrefixIndex {
  readonly list: PrefixList;
  private readonly count: number;

  constructor(private readonly parts: PrefixParts) {
    this.list = parts.list;
    this.count = parts.itemStart.length - 1;
  }

  get prefixLength(): number {
    return this.list.prefixLength;
  }

  /** Every work whose hash starts with one of `prefixes` (lower-case hex), once each, in hash order, as JSON text. */
  lookup(prefixes: readonly string[]): string[] {
    const { hashes, items, itemStart } = this.parts;
    const found = new Map<number, string>();
    for (const p of prefixes) {
      for (let i = this.lowerBound(p); i < this.count && comparePrefix(hashes, i, p) === 0; i++) {
        const hash = decoder.decode(hashes.subarray(i * HASH_HEX, (i + 1) * HASH_HEX));
        // the item is an object: its `{` gives way to the hash
        found.set(i, `{"hash":"${hash}",${decoder.decode(items.subarray(itemStart[i]! + 1, itemStart[i + 1]))}`);
      }
    }
    return [...found.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  }

  /** The first hash not below `p`. */
  private lowerBound(p: string): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (comparePrefix(this.parts.hashes, mid, p) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The order of hash i's first p.length digits against `p`: below 0, 0 when it starts with p, above 0. */
function comparePrefix(hashes: Uint8Array, i: number, p: string): number {
  const at = i * HASH_HEX;
  for (let k = 0; k < p.length; k++) {
    const d = hashes[at + k]! - p.charCodeAt(k);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether hashes i and j share their first `length` digits. */
function samePrefix(hashes: Uint8Array, i: number, j: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (hashes[i * HASH_HEX + k] !== hashes[j * HASH_HEX + k]) return false;
  return true;
}

function listOf(hashes: Uint8Array): PrefixList {
  const works = hashes.length / HASH_HEX;
  const prefixLength = prefixLengthFor(works);
  const prefixes: string[] = [];
  for (let i = 0; i < works; i++)
    if (i === 0 || !samePrefix(hashes, i - 1, i, prefixLength))
      prefixes.push(decoder.decode(hashes.subarray(i * HASH_HEX, i * HASH_HEX + prefixLength)));
  const text = `{"algorithm":"sha256","of":"doi-key","prefixLength":${prefixLength},"works":${works},"prefixes":${JSON.stringify(prefixes)}}`;
  const json = encoder.encode(text);
  return {
    json,
    gzip: gzipSync(json, { level: 9 }),
    etag: `"${createHash('sha256').update(json).digest('hex').slice(0, 32)}"`,
    prefixLength,
    works,
  };
}

function grown(bytes: Uint8Array, atLeast: number): Uint8Array {
  const next = new Uint8Array(Math.max(atLeast, bytes.length * 2));
  next.set(bytes);
  return next;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
