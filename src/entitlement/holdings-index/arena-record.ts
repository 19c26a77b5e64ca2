import { largeBytes } from './large-memory.ts';

/**
 * The entitlement index's records (holdings-table.ts), written and read only here, in an arena of segments:
 *   varint keyLen, key bytes, varint valueLen, value bytes; each record starts at an even offset
 * A record is named by a ref, its segment and offset in 32 bits (7 + 25 bits, offsets in 2-byte units): up to
 * 127 segments of 64 MiB, 8 GiB, room for the records of a few hundred million DOIs. The arena grows by
 * segments, so growing never copies what is written (nor needs twice its size for a moment), and bytes once
 * written are never overwritten: a reader may keep a segment and offsets into it.
 */

const SEGMENT_BYTES = 1 << 26;
const FIRST_SEGMENT_BYTES = 1 << 16;
const OFFSET_BITS = 25;
const OFFSET_MASK = (1 << OFFSET_BITS) - 1;
const MAX_SEGMENTS = 127;

/** Where a record's parts are (readRecord fills one; reused, so that a lookup allocates nothing). */
export interface RecordView {
  bytes: Uint8Array;
  /** the record's first byte */
  at: number;
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

export function recordView(): RecordView {
  return { bytes: EMPTY, at: 0, keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0 };
}

/** Fills `view` with the record at bytes[at]. */
export function readRecord(bytes: Uint8Array, at: number, view: RecordView): RecordView {
  view.bytes = bytes;
  view.at = at;
  let p = at;
  let n = bytes[p++]!;
  if (n >= 0x80) n = (n & 0x7f) | (bytes[p++]! << 7);
  view.keyStart = p;
  view.keyEnd = p += n;
  n = bytes[p++]!;
  if (n >= 0x80) {
    n &= 0x7f;
    for (let shift = 128; ; shift *= 128) {
      const c = bytes[p++]!;
      n += (c & 0x7f) * shift;
      if (c < 0x80) break;
    }
  }
  view.valueStart = p;
  view.valueEnd = p + n;
  return view;
}

/** The key length of the record at bytes[at], and where its key starts (keyAt): the probe loop's read. */
export function keyLengthAt(bytes: Uint8Array, at: number): number {
  const n = bytes[at]!;
  return n < 0x80 ? n : (n & 0x7f) | (bytes[at + 1]! << 7);
}
export function keyAt(bytes: Uint8Array, at: number): number {
  return bytes[at]! < 0x80 ? at + 1 : at + 2;
}

/** The bytes of a record proper (its last byte is at `at` + this - 1). */
export function recordExtent(keyLen: number, valueLen: number): number {
  return varintBytes(keyLen) + keyLen + varintBytes(valueLen) + valueLen;
}

/** The bytes a record takes in its segment, its padding to an even offset included. */
export function recordBytes(keyLen: number, valueLen: number): number {
  const n = recordExtent(keyLen, valueLen);
  return n + (n & 1);
}

function varintBytes(n: number): number {
  let bytes = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    bytes++;
  }
  return bytes;
}

/** The segments of one table (or of a build): records appended, read by ref. */
export class Arena {
  /** told of each segment once the next one starts (a build hands them out as they fill: index-build-worker.ts) */
  sealed: ((segment: number) => void) | undefined;

  constructor(
    readonly segments: Uint8Array[] = [],
    /** bytes written in each segment */
    readonly filled: number[] = [],
  ) {}

  /** bytes of every segment */
  get bytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.byteLength;
    return n;
  }

  segmentOf(ref: number): Uint8Array {
    return this.segments[ref >>> OFFSET_BITS]!;
  }

  offsetOf(ref: number): number {
    return (ref & OFFSET_MASK) * 2;
  }

  read(ref: number, view: RecordView): RecordView {
    return readRecord(this.segments[ref >>> OFFSET_BITS]!, (ref & OFFSET_MASK) * 2, view);
  }

  /** The ref of record `at` of segment `s`. */
  refOf(s: number, at: number): number {
    return ((s << OFFSET_BITS) | (at >>> 1)) >>> 0;
  }

  /** Appends the record of key[keyStart, keyEnd) and value[vStart, vEnd); returns its ref. */
  append(key: Uint8Array, keyStart: number, keyEnd: number, value: Uint8Array, vStart: number, vEnd: number): number {
    const keyLen = keyEnd - keyStart;
    const valueLen = vEnd - vStart;
    const size = recordBytes(keyLen, valueLen);
    let s = this.segments.length - 1;
    if (s < 0 || this.filled[s]! + size > this.segments[s]!.length) s = this.addSegment(size);
    const b = this.segments[s]!;
    let p = this.filled[s]!;
    const at = p;
    p = writeVarint(b, p, keyLen);
    for (let i = keyStart; i < keyEnd; i++) b[p++] = key[i]!;
    p = writeVarint(b, p, valueLen);
    if (valueLen > 64) b.set(value.subarray(vStart, vEnd), p);
    else for (let i = vStart; i < vEnd; i++) b[p + i - vStart] = value[i]!;
    this.filled[s] = at + size;
    return this.refOf(s, at);
  }

  /** A segment after the last, of room for `size` bytes at least: each twice the last, up to SEGMENT_BYTES. */
  private addSegment(size: number): number {
    if (size > SEGMENT_BYTES)
      throw new Error(`an entitlement index record of ${size} bytes is longer than a segment (${SEGMENT_BYTES})`);
    if (this.segments.length >= MAX_SEGMENTS)
      throw new Error(`the entitlement index is full: ${MAX_SEGMENTS} segments of ${SEGMENT_BYTES} bytes`);
    if (this.segments.length > 0) this.sealed?.(this.segments.length - 1);
    const last = this.segments.at(-1)?.length || this.filled.at(-1) || FIRST_SEGMENT_BYTES / 2;
    let n = Math.min(SEGMENT_BYTES, last * 2);
    while (n < size) n *= 2;
    this.segments.push(largeBytes(n));
    this.filled.push(0);
    return this.segments.length - 1;
  }
}

function writeVarint(b: Uint8Array, p: number, v: number): number {
  while (v >= 0x80) {
    b[p++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  b[p++] = v;
  return p;
}

const EMPTY = new Uint8Array(0);
