import type { Libc } from '../base/index.ts';

/**
 * Writing and reading bytes: the one writer of the store's compact values and encoded records (varints,
 * fixed-width integers, strings with an ASCII fast path: DOIs and URLs are nearly all ASCII) and, through
 * JsonBytes (json-bytes.ts), of JSON: the index's link sets, --dump's lines and the APIs' replies.
 */
const utf8 = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF: a stored part (the text after a DOI in a URL) may start with one, and reads back whole
const textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** up to this many bytes a loop copies faster than `set`, which has a fixed cost of its own */
const SHORT_COPY = 48;

/**
 * Bytes a writer copies from natively, with where they start in memory: taking the address costs about as much
 * as a short copy, so it is taken once per source and reply, not per copy. Made only by ByteWriter.source, and
 * copied from only by the writer that made it (its address is that writer's to trust).
 */
export interface CopySource {
  readonly bytes: Uint8Array;
  readonly address: number;
  readonly owner: ByteWriter;
}

/**
 * A reusable writer (`buf[0, pos)`): one per store or per route, so writing allocates nothing until the final
 * copy. Only for synchronous use between reset and view: no await in between.
 */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  /** where buf starts, for native copies (0 without them) */
  private bufAddress = 0;

  /**
   * `native`: copies through libc's memcpy where it is there and asked for (a TypedArray.set costs several times
   * a short memcpy): the replies' writers ask; the store's have no use for it.
   */
  constructor(
    size = 1 << 16,
    private readonly native: Libc | null = null,
  ) {
    this.buf = new Uint8Array(size);
    if (native) this.bufAddress = native.address(this.buf);
  }
  reset(): void {
    this.pos = 0;
  }
  /** reset, for a chain: `out.start().ascii(...)` */
  start(): this {
    this.pos = 0;
    return this;
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    if (this.native) this.bufAddress = this.native.address(next);
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
  copy(src: Uint8Array, start: number, end: number): this {
    const n = end - start;
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = start; i < end; i++) b[p++] = src[i]!;
    this.pos = p;
    return this;
  }

  /** src[start, end), without making a view of it below SHORT_COPY bytes (a view costs more than a DOI's copy). */
  range(src: Uint8Array, start: number, end: number): this {
    const n = end - start;
    if (n <= SHORT_COPY) return this.copy(src, start, end);
    this.ensure(n);
    this.buf.set(src.subarray(start, end), this.pos); // past a few dozen bytes a native copy beats the loop, view and all
    this.pos += n;
    return this;
  }

  /** Any bytes: a few dozen are copied by the loop, more by a native copy (SHORT_COPY). */
  bytes(b: Uint8Array): this {
    if (b.length <= SHORT_COPY) return this.copy(b, 0, b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** One byte (a quote, a brace). */
  byte(b: number): this {
    this.ensure(1);
    this.buf[this.pos++] = b;
    return this;
  }

  /**
   * For a hot loop that writes bytes itself: makes room for `n` more and returns the buffer, to be written from
   * `pos` on, then `moveTo` the end of what was written. Nothing written past the mark counts until then.
   */
  reserve(n: number): Uint8Array {
    this.ensure(n);
    return this.buf;
  }

  moveTo(position: number): void {
    // the next native copy writes at pos: it must be inside the buffer
    if (!(position >= 0 && position <= this.buf.length))
      throw new RangeError(`position ${position} outside the buffer`);
    this.pos = position;
  }

  /** `bytes` as a source for this writer's native copies (take it within one reply: a view may be replaced later). */
  source(bytes: Uint8Array): CopySource {
    return { bytes, address: this.native ? this.native.address(bytes) : 0, owner: this };
  }

  /** src.bytes[from, from + n), by a native copy where there is one (a few native calls beat any loop past 8 bytes). */
  copyFrom(src: CopySource, from: number, n: number): this {
    // checked here, since memcpy cannot: a range past either buffer, or an address of another writer's making,
    // would read or write memory that is not theirs (written so that NaN fails too)
    if (!(from >= 0 && n >= 0 && from + n <= src.bytes.length) || src.owner !== this)
      throw new RangeError(
        `a copy of ${n} bytes from ${from} of ${src.bytes.length}${src.owner === this ? '' : ' (a source of another writer)'}`,
      );
    if (n === 0) return this;
    this.ensure(n);
    if (this.native) this.native.memcpy(this.bufAddress + this.pos, src.address + from, n);
    else this.buf.set(src.bytes.subarray(from, from + n), this.pos);
    this.pos += n;
    return this;
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
