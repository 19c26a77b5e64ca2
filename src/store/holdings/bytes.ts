/**
 * Byte-level writing and reading for the store's compact values and encoded records: varints, fixed-width
 * integers and strings, with an ASCII fast path (DOIs and URLs are nearly all ASCII).
 */
const utf8 = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF: a stored part (the text after a DOI in a URL) may start with one, and reads back whole
const textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** A reusable writer: one per store, so encoding allocates nothing per record until the final copy. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(size = 1 << 16) {
    this.buf = new Uint8Array(size);
  }
  reset(): void {
    this.pos = 0;
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  varint(v: number): void {
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }
  u24(v: number): void {
    this.ensure(3);
    this.patchU24(this.pos, v);
    this.pos += 3;
  }
  patchU24(at: number, v: number): void {
    this.buf[at] = v >>> 16;
    this.buf[at + 1] = (v >>> 8) & 0xff;
    this.buf[at + 2] = v & 0xff;
  }
  u48(v: number): void {
    this.ensure(6);
    const hi = Math.floor(v / 0x1000000);
    const lo = v - hi * 0x1000000;
    const b = this.buf;
    b[this.pos++] = hi >>> 16;
    b[this.pos++] = (hi >>> 8) & 0xff;
    b[this.pos++] = hi & 0xff;
    b[this.pos++] = lo >>> 16;
    b[this.pos++] = (lo >>> 8) & 0xff;
    b[this.pos++] = lo & 0xff;
  }
  str(s: string): void {
    this.strRange(s, 0, s.length);
  }
  /** s[start, end) with its UTF-8 length; ASCII byte by byte (most DOIs and URLs), without making a substring. */
  strRange(s: string, start: number, end: number): void {
    const n = end - start;
    this.ensure(5 + n * 3);
    const lenAt = this.pos;
    this.varint(n); // provisional; rewritten if the UTF-8 length differs
    const b = this.buf;
    let p = this.pos;
    for (let i = start; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        // non-ASCII: re-write with the byte length as prefix
        const bytes = utf8.encode(s.slice(start, end));
        this.pos = lenAt;
        this.varint(bytes.length);
        this.ensure(bytes.length);
        this.buf.set(bytes, this.pos);
        this.pos += bytes.length;
        return;
      }
      b[p++] = c;
    }
    this.pos = p;
  }
  /** The bytes written so far, as a view (no copy): valid until the next write, which is all a putSync needs
   * (the value is copied into the transaction at once). One long-lived buffer also keeps lmdb-js from
   * resolving a new ArrayBuffer's address on every put. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
  /** Copies src[start, end): a loop, as the ranges are short (a state, an event list) and a subarray costs more. */
  copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = start; i < end; i++) b[p++] = src[i]!;
    this.pos = p;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

export class ByteReader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos;
  }
  u8(): number {
    return this.buf[this.pos++]!;
  }
  u24(): number {
    const b = this.buf;
    const p = this.pos;
    this.pos += 3;
    return (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!;
  }
  varint(): number {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = this.buf[this.pos++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  }
  u48(): number {
    const b = this.buf;
    const p = this.pos;
    this.pos += 6;
    return (
      ((b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!) * 0x1000000 + ((b[p + 3]! << 16) | (b[p + 4]! << 8) | b[p + 5]!)
    );
  }
  str(): string {
    const n = this.varint();
    const s = textDecoder.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
}

/** a[aStart, aEnd) and b[bStart, bEnd) hold the same bytes. */
export function sameBytes(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 0; i < aEnd - aStart; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}
