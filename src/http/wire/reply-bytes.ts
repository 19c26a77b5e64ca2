import { type Libc, libc } from '../../base/index.ts';

/**
 * Builds a JSON reply directly as UTF-8 bytes. A 100-DOI reply assembled as a string costs more to flatten and
 * encode in `new Response(text)` than everything else the handler does; written as bytes into one reusable
 * buffer it is a copy. Only for synchronous use: start, write, take (no await in between).
 */
const encoder = new TextEncoder();
/** up to this many bytes a loop copies faster than `set`, which has a fixed cost of its own */
const SHORT_COPY = 48;

/**
 * Bytes a reply copies from, with where they start in memory: taking the address costs about as much as a short
 * copy, so it is taken once per source and reply, not per copy. Made only by ReplyBytes.source, and copied
 * from only by the ReplyBytes that made it (its address is that reply's to trust).
 */
export interface CopySource {
  readonly bytes: Uint8Array;
  readonly address: number;
  readonly owner: ReplyBytes;
}

export class ReplyBytes {
  private buf = new Uint8Array(256 * 1024);
  private pos = 0;
  /** where buf starts, for native copies (0 without them) */
  private bufAddress: number;

  /** `native`: copies through libc's memcpy where it is there (a TypedArray.set costs several times a short memcpy) */
  constructor(private readonly native: Libc | null = libc()) {
    this.bufAddress = native ? native.address(this.buf) : 0;
  }

  start(): this {
    this.pos = 0;
    return this;
  }

  /** Text known to be ASCII (constant pieces, checked DOIs). */
  ascii(s: string): this {
    this.ensure(s.length);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
    return this;
  }

  /**
   * A JSON string of `s`: printable ASCII without a quote or backslash (URLs, DOIs, nearly everything) is
   * copied between quotes; anything else goes through JSON.stringify.
   */
  jsonString(s: string): this {
    const n = s.length;
    this.ensure(n + 2);
    const b = this.buf;
    let p = this.pos;
    b[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return this.text(JSON.stringify(s));
      b[p++] = c;
    }
    b[p++] = 0x22;
    this.pos = p;
    return this;
  }

  /** Any text, UTF-8 encoded. */
  text(s: string): this {
    this.ensure(s.length * 3);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
    return this;
  }

  /**
   * For a hot loop that writes bytes itself: makes room for `n` more and returns the buffer, to be written from
   * `position` on, then `moveTo` the end of what was written. Nothing written past the mark counts until then.
   */
  reserve(n: number): Uint8Array {
    this.ensure(n);
    return this.buf;
  }

  get position(): number {
    return this.pos;
  }

  moveTo(position: number): void {
    // the next native copy writes at pos: it must be inside the buffer
    if (!(position >= 0 && position <= this.buf.length))
      throw new RangeError(`position ${position} outside the reply buffer`);
    this.pos = position;
  }

  /** A short constant piece, pre-encoded: a loop beats `set` for a few dozen bytes. */
  piece(b: Uint8Array): this {
    this.ensure(b.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < b.length; i++) buf[p++] = b[i]!;
    this.pos = p;
    return this;
  }

  /** b[start, end), copied without making a view of it (a view costs more than copying a DOI's bytes). */
  range(b: Uint8Array, start: number, end: number): this {
    const n = end - start;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    if (n > SHORT_COPY) {
      buf.set(b.subarray(start, end), p); // past a few dozen bytes a native copy beats the loop, view and all
      this.pos = p + n;
      return this;
    }
    for (let i = start; i < end; i++) buf[p++] = b[i]!;
    this.pos = p;
    return this;
  }

  /** `bytes` as a source for this reply's copies (take it within one reply: a view of it may be replaced later). */
  source(bytes: Uint8Array): CopySource {
    return { bytes, address: this.native ? this.native.address(bytes) : 0, owner: this };
  }

  /** src.bytes[from, from + n), by a native copy where there is one (a few native calls beat any loop past 8 bytes). */
  copy(src: CopySource, from: number, n: number): this {
    // checked here, since memcpy cannot: a range past either buffer, or an address of another reply's making,
    // would read or write memory that is not theirs (written so that NaN fails too)
    if (!(from >= 0 && n >= 0 && from + n <= src.bytes.length) || src.owner !== this)
      throw new RangeError(
        `a copy of ${n} bytes from ${from} of ${src.bytes.length}${src.owner === this ? '' : ' (a source of another reply)'}`,
      );
    if (n === 0) return this;
    this.ensure(n);
    if (this.native) this.native.memcpy(this.bufAddress + this.pos, src.address + from, n);
    else this.buf.set(src.bytes.subarray(from, from + n), this.pos);
    this.pos += n;
    return this;
  }

  /** One byte (a quote, a brace). */
  byte(b: number): this {
    this.ensure(1);
    this.buf[this.pos++] = b;
    return this;
  }

  /** Any bytes: a few dozen are copied by the loop, more by a native copy (SHORT_COPY). */
  bytes(b: Uint8Array): this {
    if (b.length <= SHORT_COPY) return this.piece(b);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /**
   * What was written, as a view of the reused buffer: Bun's Response copies a typed-array body when it is
   * constructed (test/http/routes/updates-api.test.ts holds this), so a copy here would be a second one.
   */
  take(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    if (this.native) this.bufAddress = this.native.address(next);
  }
}
