import { FOLDED_HASH_SEED, foldByte, foldedHash, foldedHashEnd, foldedHashStep } from '../doi/index.ts';
import { KEY_OFFSET, keyLength, recordBytes, recordSize, valueEnd, valueStart, writeRecord } from './arena-record.ts';
import { largeBytes, largeCopy, largeInt32s } from './large-memory.ts';
import { HASH_BITS, linesPast, slotHash } from './table-slot.ts';

/**
 * DOI key -> value bytes, off the JS heap: the entitlement index holds every DOI with a live holding (a million
 * and more), so entries are bytes in one growing arena and the hash table is two typed arrays. A changed entry
 * is appended and its slot repointed; the old bytes are garbage until the arena is compacted. Bytes handed out
 * by get() are never overwritten (a compaction copies into a new arena), so a reader may keep them across awaits.
 *
 * Keys are DOI keys (src/doi/rules.ts); lookups fold ASCII letters as the key does and hash with foldedHash, so a
 * DOI can be looked up from the bytes of a request as well as from its key string.
 *
 * The arena's records: arena-record.ts.
 */
export class HoldingsTable {
  private arena = new Uint8Array(1 << 16);
  private used = 0;
  private garbage = 0;
  /**
   * Two Int32 per slot, side by side so that a probe touches one cache line: the arena offset + 1 of the entry's
   * record (EMPTY, or DELETED: a tombstone keeps probe chains whole), then the key's hash with the record's
   * length in cache lines (table-slot.ts).
   */
  private slots = new Int32Array(2 << 10);
  private count = 0;
  /** live entries plus tombstones */
  private occupied = 0;
  private readonly scratch = new Uint8Array(4 * 1024);
  private readonly encoder = new TextEncoder();

  get size(): number {
    return this.count;
  }

  /** What the table is made of, for another thread (index-build-worker.ts): transfer the two buffers. */
  parts(): TableParts {
    return { arena: this.arena, used: this.used, garbage: this.garbage, slots: this.slots, count: this.count, occupied: this.occupied };
  }

  /** The table another thread built (its parts()). */
  static fromParts(p: TableParts): HoldingsTable {
    const t = new HoldingsTable();
    ({ arena: t.arena, used: t.used, garbage: t.garbage, slots: t.slots, count: t.count, occupied: t.occupied } = p);
    return t;
  }

  /** Bytes the table holds (arena and slots), for the memory figure. */
  get bytes(): number {
    return this.arena.byteLength + this.slots.byteLength;
  }

  /** The value of a DOI key (a string), or undefined. */
  get(key: string): Uint8Array | undefined {
    const v = this.valueAtKey(key);
    return v < 0 ? undefined : this.arena.subarray(v, valueEnd(this.arena, v));
  }

  /** The value of the DOI whose UTF-8 bytes are b[start, end), matched as its key (ASCII letters folded). */
  getFolded(b: Uint8Array, start: number, end: number, h = foldedHash(b, start, end)): Uint8Array | undefined {
    const v = this.valueAt(b, start, end, h);
    return v < 0 ? undefined : this.arena.subarray(v, valueEnd(this.arena, v));
  }

  /**
   * Where the value of the DOI b[start, end) starts in `arena` (its length is the u32 before it), or -1: the hot
   * path reads values in place, without a view per lookup. Take `arena` at the same time: a later change may
   * move to a new arena, but never overwrites this one.
   */
  valueAt(b: Uint8Array, start: number, end: number, h: number): number {
    const s = this.find(h, b, start, end);
    if (s < 0) return -1;
    return valueStart(this.arena, this.slots[2 * s]! - 1);
  }

  /** valueAt for a DOI key string. */
  valueAtKey(key: string): number {
    const n = this.keyBytes(key);
    return this.valueAt(this.scratch, 0, n, this.scratchHash);
  }

  get arenaBytes(): Uint8Array {
    return this.arena;
  }

  /**
   * Brings the memory a lookup of hash `h` reads into cache ahead of the lookup: first its slot (touchSlot, for
   * every DOI of a request), then the record the slot points at (touchRecord, again for every DOI). Each pass
   * issues independent loads, so the CPU waits for a request's 100 DOIs' memory in parallel; looked up one by
   * one, each lookup waits for its own two dependent loads (the table is far larger than any cache).
   */
  touchSlot(h: number): void {
    this.touched ^= this.slots[2 * this.homeSlot(h)]!;
  }

  touchRecord(h: number): void {
    const s = 2 * this.homeSlot(h);
    const at = this.slots[s]! - 1;
    if (at < 0) return;
    // every line of the record, counted in the slot (in cache by now): bounded by the record's own length, the
    // loop would end on a branch that waits for memory, and each wrong guess drops the loads issued after it
    const a = this.arena;
    const lines = linesPast(this.slots[s + 1]!);
    let t = a[at]!;
    for (let k = 1, line = at - (at & 63); k <= lines; k++) t ^= a[line + 64 * k]!;
    this.touched ^= t;
  }
  touched = 0; // what the touches read: kept so that the loads are not optimised away

  /** Sets (or replaces) the value of a DOI key; an empty value deletes the entry. */
  set(key: string, value: Uint8Array): void {
    if (value.length === 0) return this.delete(key);
    this.put(this.keyBytes(key), this.scratchHash, value);
  }

  /** set() of a non-empty value for a key given as its UTF-8 bytes b[start, end) (a bulk build reads them so). */
  setBytes(b: Uint8Array, start: number, end: number, value: Uint8Array): void {
    if (end - start > this.scratch.length) throw new Error(`a DOI key of ${end - start} bytes is longer than any DOI key`);
    this.scratch.set(b.subarray(start, end));
    this.put(end - start, foldedHash(b, start, end), value);
  }

  /** Puts the value of the key in scratch[0, n) with hash h. */
  private put(n: number, h: number, value: Uint8Array): void {
    let s = this.find(h, this.scratch, 0, n);
    const record = recordBytes(n, value.length);
    if (s >= 0) this.garbage += recordSize(this.arena, this.slots[2 * s]! - 1);
    else {
      if ((this.occupied + 1) * 8 > this.slots.length * 3) this.resize(this.count + 1);
      s = this.freeSlot(h);
      if (this.slots[2 * s] === EMPTY) this.occupied++;
      this.count++;
    }
    const at = this.reserve(record);
    writeRecord(this.arena, at, this.scratch, n, value);
    this.used = at + record;
    this.slots[2 * s] = at + 1;
    this.slots[2 * s + 1] = slotHash(h, at, record);
    this.compactIfWasteful();
  }

  delete(key: string): void {
    const n = this.keyBytes(key);
    const s = this.find(this.scratchHash, this.scratch, 0, n);
    if (s < 0) return;
    this.garbage += recordSize(this.arena, this.slots[2 * s]! - 1);
    this.slots[2 * s] = DELETED;
    this.count--;
    this.compactIfWasteful();
  }

  /** Every entry (key, value), in no particular order: for tests that hold the table to the store. */
  *entries(): Generator<[string, Uint8Array]> {
    const decoder = new TextDecoder();
    for (let s = 0; s < this.slots.length; s += 2) {
      const at = this.slots[s]! - 1;
      if (at < 0) continue;
      const v = valueStart(this.arena, at);
      yield [decoder.decode(this.arena.subarray(at + KEY_OFFSET, at + KEY_OFFSET + keyLength(this.arena, at))), this.arena.subarray(v, valueEnd(this.arena, v))];
    }
  }

  /** The slot number of the key b[start, end) with hash h, or -1. */
  private find(h: number, b: Uint8Array, start: number, end: number): number {
    const { slots, arena } = this;
    const mask = (slots.length >> 1) - 1;
    const n = end - start;
    const hash = h & HASH_BITS;
    for (let s = this.homeSlot(h); ; s = (s + 1) & mask) {
      const slot = slots[2 * s]!;
      if (slot === EMPTY) return -1;
      if (slot === DELETED || (slots[2 * s + 1]! & HASH_BITS) !== hash) continue;
      const at = slot - 1;
      if (keyLength(arena, at) !== n) continue;
      const key = at + KEY_OFFSET;
      let i = 0;
      while (i < n && foldByte(b[start + i]!) === arena[key + i]) i++;
      if (i === n) return s;
    }
  }

  private freeSlot(h: number): number {
    const mask = (this.slots.length >> 1) - 1;
    let s = this.homeSlot(h);
    while (this.slots[2 * s]! > 0) s = (s + 1) & mask;
    return s;
  }

  /** The slot a probe for hash h starts at. */
  private homeSlot(h: number): number {
    return h & HASH_BITS & ((this.slots.length >> 1) - 1);
  }

  /**
   * The key's UTF-8 bytes in the scratch buffer, their foldedHash in scratchHash; returns their length. ASCII keys
   * (nearly all) are copied and hashed in one loop.
   */
  private keyBytes(key: string): number {
    const n = key.length;
    if (n * 3 > this.scratch.length) throw new Error(`a DOI key of ${n} characters is longer than any DOI key`);
    const b = this.scratch;
    let h = FOLDED_HASH_SEED;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) {
        const written = this.encoder.encodeInto(key, b).written;
        this.scratchHash = foldedHash(b, 0, written);
        return written;
      }
      b[i] = c;
      h = foldedHashStep(h, c);
    }
    this.scratchHash = foldedHashEnd(h);
    return n;
  }
  private scratchHash = 0;

  private reserve(n: number): number {
    if (this.used + n > this.arena.length) {
      let size = this.arena.length * 2;
      while (size < this.used + n) size *= 2;
      this.arena = largeCopy(this.arena.subarray(0, this.used), size);
    }
    return this.used;
  }

  private resize(atLeast: number): void {
    let capacity = 1 << 10;
    while (capacity * 3 < atLeast * 4 * 2) capacity *= 2; // room to grow to twice the entries before the next resize
    const old = this.slots;
    this.slots = largeInt32s(2 * capacity);
    this.occupied = 0;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s]! <= 0) continue;
      const t = this.freeSlot(old[s + 1]!);
      this.slots[2 * t] = old[s]!;
      this.slots[2 * t + 1] = old[s + 1]!;
      this.occupied++;
    }
  }

  /** Gives back the arena's unused tail (after a bulk load). */
  trim(): void {
    if (this.arena.length - this.used < 1 << 20) return;
    this.arena = largeCopy(this.arena.subarray(0, this.used), this.used + (1 << 16));
  }

  /** A new arena with only the live records once more than half of it is garbage. */
  private compactIfWasteful(): void {
    if (this.garbage < 1 << 20 || this.garbage * 2 < this.used) return;
    const live = this.used - this.garbage;
    let size = 1 << 16;
    while (size < live * 1.5) size *= 2;
    const next = largeBytes(size);
    let p = 0;
    for (let s = 0; s < this.slots.length; s += 2) {
      const at = this.slots[s]! - 1;
      if (at < 0) continue;
      const n = recordSize(this.arena, at);
      next.set(this.arena.subarray(at, at + n), p);
      this.slots[s] = p + 1;
      this.slots[s + 1] = slotHash(this.slots[s + 1]!, p, n);
      p += n;
    }
    this.arena = next;
    this.used = p;
    this.garbage = 0;
  }

}

/** What a table is made of (parts(), fromParts()): its two buffers are transferred between threads. */
export type TableParts = { arena: Uint8Array<ArrayBuffer>; used: number; garbage: number; slots: Int32Array<ArrayBuffer>; count: number; occupied: number };

const EMPTY = 0;
const DELETED = -1;
