import { FOLDED_HASH_SEED, foldByte, foldedHash, foldedHashEnd, foldedHashStep } from '../../doi/index.ts';
import {
  Arena,
  keyAt,
  keyLengthAt,
  type RecordView,
  readRecord,
  recordBytes,
  recordExtent,
  recordView,
} from './arena-record.ts';
import { largeUint32s } from './large-memory.ts';
import { HASH_BITS, linesPast, slotHash } from './table-slot.ts';

/**
 * DOI key -> value bytes, off the JS heap: the entitlement index holds every DOI with a live holding (a hundred
 * million at real scale), so entries are records in an arena of segments (arena-record.ts) and the hash table is
 * one typed array. A changed entry is appended and its slot repointed; the old bytes are garbage until the arena
 * is compacted. Bytes once written are never overwritten (a compaction copies into new segments), so a reader may
 * keep a segment across awaits.
 *
 * Keys are DOI keys (src/doi/rules.ts); lookups fold ASCII letters as the key does and hash with foldedHash, so a
 * DOI can be looked up from the bytes of a request as well as from its key string.
 */
export class HoldingsTable {
  private arena = new Arena();
  /** bytes of records written, live or not, and of those no longer live */
  private used = 0;
  private garbage = 0;
  /**
   * Two Uint32 per slot, side by side so that a probe touches one cache line: the ref + 1 of the entry's record
   * (EMPTY, or DELETED: a tombstone keeps probe chains whole), then the key's hash with the record's length in
   * cache lines (table-slot.ts). Any number of slots (a build sizes them to its DOIs); linear probing.
   */
  private slots = new Uint32Array(2 * MIN_CAPACITY);
  private capacity = MIN_CAPACITY;
  private homeScale = MIN_CAPACITY * HASH_SCALE;
  private count = 0;
  /** live entries plus tombstones */
  private occupied = 0;
  private readonly scratch = new Uint8Array(4 * 1024);
  private readonly encoder = new TextEncoder();
  private readonly view = recordView();

  get size(): number {
    return this.count;
  }

  /** What the table is made of, for another thread (index-build-worker.ts): transfer its buffers. */
  parts(): TableParts {
    const { arena, used, garbage, slots, count, occupied } = this;
    return { segments: arena.segments, filled: arena.filled, used, garbage, slots, count, occupied };
  }

  /** The table another thread built (its parts()). */
  static fromParts(p: TableParts): HoldingsTable {
    const t = new HoldingsTable();
    t.arena = new Arena(p.segments, p.filled);
    ({ used: t.used, garbage: t.garbage, count: t.count, occupied: t.occupied } = p);
    t.setSlots(p.slots);
    return t;
  }

  /** Bytes the table holds (its segments and slots), for the memory figure. */
  get bytes(): number {
    return this.arena.bytes + this.slots.byteLength;
  }

  /** The value of a DOI key (a string), or undefined. */
  get(key: string): Uint8Array | undefined {
    const ref = this.refOfKey(key);
    if (ref < 0) return undefined;
    const v = this.arena.read(ref, this.view);
    return v.bytes.subarray(v.valueStart, v.valueEnd);
  }

  /** The ref of the record of the DOI whose UTF-8 bytes are b[start, end) (ASCII letters folded), or -1. */
  refAt(b: Uint8Array, start: number, end: number, h: number): number {
    const s = this.find(h, b, start, end);
    return s < 0 ? -1 : this.slots[2 * s]! - 1;
  }

  /** refAt for a DOI key string. */
  refOfKey(key: string): number {
    const n = this.keyBytes(key);
    return this.refAt(this.scratch, 0, n, this.scratchHash);
  }

  /** Fills `view` with the record of a ref (refAt); its bytes stay valid whatever changes after. */
  read(ref: number, view: RecordView): RecordView {
    return this.arena.read(ref, view);
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
    const ref = this.slots[s]! - 1;
    if (ref < 0 || ref === DELETED - 1) return;
    // every line of the record, counted in the slot (in cache by now): bounded by the record's own length, the
    // loop would end on a branch that waits for memory, and each wrong guess drops the loads issued after it
    const a = this.arena.segmentOf(ref);
    const at = this.arena.offsetOf(ref);
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

  /** set() for a key given as its UTF-8 bytes b[start, end). */
  setBytes(b: Uint8Array, start: number, end: number, value: Uint8Array): void {
    if (end - start > this.scratch.length)
      throw new Error(`a DOI key of ${end - start} bytes is longer than any DOI key`);
    this.scratch.set(b.subarray(start, end));
    if (value.length === 0) this.remove(end - start, foldedHash(b, start, end));
    else this.put(end - start, foldedHash(b, start, end), value);
  }

  /** Puts the value of the key in scratch[0, n) with hash h. */
  private put(n: number, h: number, value: Uint8Array): void {
    let s = this.find(h, this.scratch, 0, n);
    if (s >= 0) this.garbage += this.sizeOf(this.slots[2 * s]! - 1);
    else {
      if (this.occupied + 1 > this.capacity * MAX_LOAD) this.resize(Math.ceil((this.count + 1) / GROWN_LOAD));
      s = this.freeSlot(h);
      if (this.slots[2 * s] === EMPTY) this.occupied++;
      this.count++;
    }
    const ref = this.arena.append(this.scratch, 0, n, value, 0, value.length);
    const size = recordBytes(n, value.length);
    this.used += size;
    this.slots[2 * s] = ref + 1;
    this.slots[2 * s + 1] = slotHash(h, this.arena.offsetOf(ref), recordExtent(n, value.length));
    this.compactIfWasteful();
  }

  delete(key: string): void {
    this.remove(this.keyBytes(key), this.scratchHash);
  }

  /** Deletes the key in scratch[0, n) with hash h. */
  private remove(n: number, h: number): void {
    const s = this.find(h, this.scratch, 0, n);
    if (s < 0) return;
    this.garbage += this.sizeOf(this.slots[2 * s]! - 1);
    this.slots[2 * s] = DELETED;
    this.count--;
    this.compactIfWasteful();
  }

  /** Every entry's record, in no particular order (one view, refilled for each): for tests that hold the table to the store. */
  *records(): Generator<RecordView> {
    const view = recordView();
    for (let s = 0; s < 2 * this.capacity; s += 2) {
      const slot = this.slots[s]!;
      if (slot !== EMPTY && slot !== DELETED) yield this.arena.read(slot - 1, view);
    }
  }

  /** Every entry (key, value), in no particular order. */
  *entries(): Generator<[string, Uint8Array]> {
    const decoder = new TextDecoder();
    for (const v of this.records())
      yield [decoder.decode(v.bytes.subarray(v.keyStart, v.keyEnd)), v.bytes.slice(v.valueStart, v.valueEnd)];
  }

  /** The slot number of the key b[start, end) with hash h, or -1. */
  private find(h: number, b: Uint8Array, start: number, end: number): number {
    const { slots, arena, capacity } = this;
    const n = end - start;
    const hash = h & HASH_BITS;
    for (let s = this.homeSlot(h); ; s = s + 1 === capacity ? 0 : s + 1) {
      const slot = slots[2 * s]!;
      if (slot === EMPTY) return -1;
      if (slot === DELETED || (slots[2 * s + 1]! & HASH_BITS) !== hash) continue;
      const bytes = arena.segmentOf(slot - 1);
      const at = arena.offsetOf(slot - 1);
      if (keyLengthAt(bytes, at) !== n) continue;
      const key = keyAt(bytes, at);
      let i = 0;
      while (i < n && foldByte(b[start + i]!) === bytes[key + i]) i++;
      if (i === n) return s;
    }
  }

  private freeSlot(h: number): number {
    const { slots, capacity } = this;
    let s = this.homeSlot(h);
    while (slots[2 * s] !== EMPTY && slots[2 * s] !== DELETED) s = s + 1 === capacity ? 0 : s + 1;
    return s;
  }

  /** The slot a probe for hash h starts at: the hash's 28 bits scaled to the slots (any number of them). */
  private homeSlot(h: number): number {
    return Math.floor((h & HASH_BITS) * this.homeScale);
  }

  /** The bytes of the record of a ref. */
  private sizeOf(ref: number): number {
    const v = this.arena.read(ref, this.view);
    return recordBytes(v.keyEnd - v.keyStart, v.valueEnd - v.valueStart);
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

  private setSlots(slots: Uint32Array<ArrayBuffer>): void {
    this.slots = slots;
    this.capacity = slots.length / 2;
    this.homeScale = this.capacity * HASH_SCALE;
  }

  /** New slots for `capacity` entries, every live entry put in again (tombstones dropped). */
  private resize(capacity: number): void {
    const old = this.slots;
    this.setSlots(largeUint32s(2 * Math.max(MIN_CAPACITY, capacity)));
    this.occupied = 0;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s] === EMPTY || old[s] === DELETED) continue;
      const t = this.freeSlot(old[s + 1]!);
      this.slots[2 * t] = old[s]!;
      this.slots[2 * t + 1] = old[s + 1]!;
      this.occupied++;
    }
  }

  /**
   * New segments with only the live records once more than half the arena is garbage (a changed entry leaves its
   * old record behind). Runs as DOIs change, never in a build: a build writes each record once.
   */
  private compactIfWasteful(): void {
    if (this.garbage < 1 << 20 || this.garbage * 2 < this.used) return;
    const next = new Arena();
    const view = recordView();
    let used = 0;
    for (let s = 0; s < 2 * this.capacity; s += 2) {
      const slot = this.slots[s]!;
      if (slot === EMPTY || slot === DELETED) continue;
      const v = this.arena.read(slot - 1, view);
      const ref = next.append(v.bytes, v.keyStart, v.keyEnd, v.bytes, v.valueStart, v.valueEnd);
      this.slots[s] = ref + 1;
      this.slots[s + 1] = slotHash(this.slots[s + 1]!, next.offsetOf(ref), v.valueEnd - v.at);
      used += recordBytes(v.keyEnd - v.keyStart, v.valueEnd - v.valueStart);
    }
    this.arena = next;
    this.used = used;
    this.garbage = 0;
  }

  /**
   * A table of records written in key order, each key once (a build from the store): the records go to the arena
   * as they come, and the slots are made once, at the end, for the number of keys then known. Nothing is copied
   * or made twice, so a build never holds more than the table it makes.
   */
  static builder(handOut?: (segment: number, bytes: Uint8Array) => void): TableBuilder {
    return new TableBuilder(handOut);
  }

  /** builder()'s end: slots for the arena's records (each key once), at the build's load. */
  static ofRecords(arena: Arena, count: number, used: number): HoldingsTable {
    arena.sealed = undefined;
    const t = new HoldingsTable();
    t.arena = arena;
    t.used = used;
    t.setSlots(largeUint32s(2 * Math.max(MIN_CAPACITY, Math.ceil(count / BUILT_LOAD))));
    const view = recordView();
    // in batches: the hashes of a batch's records first, then their home slots touched, then the slots taken, so
    // that the CPU waits for a batch's slots in parallel, not for each in turn (the slots are far larger than any
    // cache; one by one, this was a seventh of a build)
    const hashes = new Int32Array(SLOT_BATCH);
    const refs = new Uint32Array(SLOT_BATCH);
    const metas = new Uint32Array(SLOT_BATCH);
    let n = 0;
    const place = () => {
      for (let i = 0; i < n; i++) t.touchSlot(hashes[i]!);
      for (let i = 0; i < n; i++) {
        const s = t.freeSlot(hashes[i]!);
        t.slots[2 * s] = refs[i]! + 1;
        t.slots[2 * s + 1] = metas[i]!;
      }
      n = 0;
    };
    for (let seg = 0; seg < arena.segments.length; seg++) {
      const bytes = arena.segments[seg]!;
      const filled = arena.filled[seg]!;
      for (let at = 0; at < filled; ) {
        readRecord(bytes, at, view);
        const h = foldedHash(bytes, view.keyStart, view.keyEnd);
        hashes[n] = h;
        refs[n] = arena.refOf(seg, at);
        metas[n] = slotHash(h, at, view.valueEnd - at);
        if (++n === SLOT_BATCH) place();
        at += recordBytes(view.keyEnd - view.keyStart, view.valueEnd - view.valueStart);
      }
    }
    place();
    t.count = t.occupied = count;
    return t;
  }
}

/** See HoldingsTable.builder. */
export class TableBuilder {
  private readonly arena = new Arena();
  private count = 0;
  private used = 0;
  private finished = false;

  /**
   * `handOut`: each segment as soon as it is full, and the last at seal(); the builder keeps none of them. A
   * build on a worker sends them away as they fill: a thread that holds large buffers lets its garbage grow in
   * proportion (JavaScriptCore's collector waits longer), and reading the store makes garbage at every record.
   */
  constructor(private readonly handOut?: (segment: number, bytes: Uint8Array) => void) {
    if (handOut) this.arena.sealed = (s) => this.give(s);
  }

  /** The record of key b[start, end) (a DOI key, not seen before) and value[vStart, vEnd). */
  add(b: Uint8Array, start: number, end: number, value: Uint8Array, vStart: number, vEnd: number): void {
    this.arena.append(b, start, end, value, vStart, vEnd);
    this.used += recordBytes(end - start, vEnd - vStart);
    this.count++;
  }

  /** The table of the records added; once (the table owns the arena after). */
  finish(): HoldingsTable {
    this.end();
    return HoldingsTable.ofRecords(this.arena, this.count, this.used);
  }

  /** The records' figures, every segment handed out: HoldingsTable.ofRecords makes the table of them elsewhere. */
  seal(): BuiltRecords {
    this.end();
    if (this.arena.segments.length > 0) this.give(this.arena.segments.length - 1);
    return { filled: this.arena.filled, count: this.count, used: this.used };
  }

  private end(): void {
    if (this.finished) throw new Error('a table builder is finished once');
    this.finished = true;
  }

  private give(s: number): void {
    const bytes = this.arena.segments[s]!;
    this.arena.segments[s] = HANDED_OUT;
    this.handOut!(s, bytes);
  }
}

/** What seal() leaves: with the segments handed out, what HoldingsTable.ofRecords needs. */
export type BuiltRecords = { filled: number[]; count: number; used: number };

const HANDED_OUT = new Uint8Array(0);

/** What a table is made of (parts(), fromParts()): its buffers are transferred between threads. */
export type TableParts = {
  segments: Uint8Array[];
  filled: number[];
  used: number;
  garbage: number;
  slots: Uint32Array<ArrayBuffer>;
  count: number;
  occupied: number;
};

const EMPTY = 0;
const DELETED = 0xffffffff;
const MIN_CAPACITY = 1024;
/** records whose slots ofRecords finds together */
const SLOT_BATCH = 32;
/** the slots are made larger before more than this share is taken (live entries and tombstones) */
const MAX_LOAD = 0.75;
/** the share of slots a table grown by put() starts at, and one a build makes */
const GROWN_LOAD = 0.5;
const BUILT_LOAD = 0.7;
/** a 28-bit hash times this times the number of slots is a slot */
const HASH_SCALE = 2 ** -28;
