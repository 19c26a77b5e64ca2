import { foldByte, foldedHash } from '../../doi/index.ts';

/** An UpdatesTable as flat buffers: what a build on another thread sends back (transferred, not copied). */
export interface UpdatesTableParts {
  /** every key's UTF-8 bytes back to back; entry i is keyBytes[keyStart[i], keyStart[i + 1]) */
  keyBytes: Uint8Array;
  keyStart: Int32Array;
  hashes: Int32Array;
  /** every entry's served list (UTF-8 JSON) back to back; entry i is values[valueStart[i], valueStart[i + 1]) */
  values: Uint8Array;
  valueStart: Int32Array;
  /** entry index + 1 per slot, 0 for an empty slot (linear probing) */
  slots: Int32Array;
}

const encoder = new TextEncoder();

/**
 * The Updates API's lookup table: DOI key -> the work's served update list as UTF-8 JSON. The keys' UTF-8 bytes
 * sit in an open-addressing hash table, so a DOI can be looked up straight from the bytes of a request, ASCII
 * letters folded on the way (the DOI key's rule and hash: src/doi/plain.ts), without first making a string of it.
 * Built once per index generation (UpdatesTable.of, or on another thread: parts()), then only read.
 */
export class UpdatesTable {
  constructor(private readonly p: UpdatesTableParts) {}

  /** The table of `entries` (DOI key -> served list), in their order. */
  static of(entries: Iterable<readonly [string, Uint8Array]>): UpdatesTable {
    const keys: Uint8Array[] = [];
    const lists: Uint8Array[] = [];
    for (const [k, v] of entries) {
      keys.push(encoder.encode(k));
      lists.push(v);
    }
    const n = keys.length;
    const [keyBytes, keyStart] = concat(keys);
    const [values, valueStart] = concat(lists);
    const hashes = new Int32Array(n);
    let capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    const slots = new Int32Array(capacity);
    const mask = capacity - 1;
    for (let i = 0; i < n; i++) {
      const h = foldedHash(keyBytes, keyStart[i]!, keyStart[i + 1]!);
      hashes[i] = h;
      let s = h & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = i + 1;
    }
    return new UpdatesTable({ keyBytes, keyStart, hashes, values, valueStart, slots });
  }

  /** The buffers, for sending to another thread (which makes its table with `new UpdatesTable(parts)`). */
  parts(): UpdatesTableParts {
    return this.p;
  }

  get size(): number {
    return this.p.hashes.length;
  }

  /** The list of a DOI key. */
  get(key: string): Uint8Array | undefined {
    const b = encoder.encode(key);
    return this.getFolded(b, 0, b.length);
  }

  /** The list for the DOI whose UTF-8 bytes are b[start, end), matched as its key (ASCII letters folded). */
  getFolded(b: Uint8Array, start: number, end: number): Uint8Array | undefined {
    return this.getHashed(foldedHash(b, start, end), b, start, end);
  }

  /** getFolded for a caller that has the bytes' foldedHash already (copyPlainDoi computes it while copying). */
  getHashed(h: number, b: Uint8Array, start: number, end: number): Uint8Array | undefined {
    const { slots, hashes, keyStart, keyBytes } = this.p;
    const mask = slots.length - 1;
    const n = end - start;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s]! - 1;
      if (e < 0) return undefined;
      if (hashes[e] !== h) continue;
      const k = keyStart[e]!;
      if (keyStart[e + 1]! - k !== n) continue;
      let i = 0;
      while (i < n && foldByte(b[start + i]!) === keyBytes[k + i]) i++;
      if (i === n) return this.p.values.subarray(this.p.valueStart[e], this.p.valueStart[e + 1]);
    }
  }
}

/** The pieces back to back, and where each starts (one more offset: the end). */
function concat(pieces: readonly Uint8Array[]): [Uint8Array, Int32Array] {
  const start = new Int32Array(pieces.length + 1);
  let at = 0;
  pieces.forEach((p, i) => {
    start[i] = at;
    at += p.length;
  });
  start[pieces.length] = at;
  if (at > 0x7fffffff)
    throw new RangeError(`the Updates API's table would hold ${at} bytes: more than its 2 GiB offsets address`);
  const out = new Uint8Array(at);
  pieces.forEach((p, i) => out.set(p, start[i]!));
  return [out, start];
}
