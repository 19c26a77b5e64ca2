import { foldByte, foldedHash } from '../doi/index.ts';

/**
 * The Updates API's lookup table: DOI key -> the work's served update list as UTF-8 JSON. Besides a Map for
 * string keys, the keys' UTF-8 bytes sit in an open-addressing hash table, so a DOI can be looked up straight
 * from the bytes of a request, ASCII letters folded on the way (the DOI key's rule and hash: src/doi/plain.ts),
 * without first making a string of it. Built once per index generation, then only read.
 */
export class UpdatesTable {
  private readonly byKey: ReadonlyMap<string, Uint8Array>;
  /** every key's UTF-8 bytes back to back; entry i is keyBytes[keyStart[i], keyStart[i + 1]) */
  private readonly keyBytes: Uint8Array;
  private readonly keyStart: Int32Array;
  private readonly hashes: Int32Array;
  private readonly values: Uint8Array[];
  /** entry index + 1 per slot, 0 for an empty slot (linear probing) */
  private readonly slots: Int32Array;
  private readonly mask: number;

  /** Takes `entries` as they are (not copied): the caller hands over a map it no longer changes. */
  constructor(entries: ReadonlyMap<string, Uint8Array>) {
    this.byKey = entries;
    const encoder = new TextEncoder();
    const encoded = [...entries.keys()].map((k) => encoder.encode(k));
    this.keyBytes = new Uint8Array(encoded.reduce((n, k) => n + k.length, 0));
    this.keyStart = new Int32Array(encoded.length + 1);
    this.hashes = new Int32Array(encoded.length);
    this.values = [...entries.values()];
    let capacity = 16;
    while (capacity < encoded.length * 2) capacity *= 2;
    this.slots = new Int32Array(capacity);
    this.mask = capacity - 1;
    let at = 0;
    encoded.forEach((key, i) => {
      this.keyStart[i] = at;
      this.keyBytes.set(key, at);
      at += key.length;
      const h = foldedHash(key, 0, key.length);
      this.hashes[i] = h;
      let s = h & this.mask;
      while (this.slots[s] !== 0) s = (s + 1) & this.mask;
      this.slots[s] = i + 1;
    });
    this.keyStart[encoded.length] = at;
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Uint8Array | undefined {
    return this.byKey.get(key);
  }

  /** The list for the DOI whose UTF-8 bytes are b[start, end), matched as its key (ASCII letters folded). */
  getFolded(b: Uint8Array, start: number, end: number): Uint8Array | undefined {
    return this.getHashed(foldedHash(b, start, end), b, start, end);
  }

  /** getFolded for a caller that has the bytes' foldedHash already (copyPlainDoi computes it while copying). */
  getHashed(h: number, b: Uint8Array, start: number, end: number): Uint8Array | undefined {
    const { slots, mask, hashes, keyStart, keyBytes } = this;
    const n = end - start;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s]! - 1;
      if (e < 0) return undefined;
      if (hashes[e] !== h) continue;
      const k = keyStart[e]!;
      if (keyStart[e + 1]! - k !== n) continue;
      let i = 0;
      while (i < n && foldByte(b[start + i]!) === keyBytes[k + i]) i++;
      if (i === n) return this.values[e];
    }
  }
}
