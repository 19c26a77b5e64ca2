import { ByteWriter } from './byte-writer.ts';
import { BACKSLASH, QUOTE } from './json-punctuation.ts';

const encoder = new TextEncoder();

/**
 * UTF-8 JSON text in a growing buffer (`buf[0, pos)`): the one JSON writer, of the store's fast paths (--dump,
 * the entitlement index's link sets) and of the APIs' replies. A reply assembled as a string costs more to flatten
 * and encode in `new Response(text)` than everything else its handler does; written as bytes it is a copy.
 */
export class JsonBytes extends ByteWriter {
  /** Text known to be ASCII and to need no escaping (field names, punctuation, fixed values, checked DOIs). */
  ascii(s: string): this {
    this.ensure(s.length);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
    return this;
  }

  /** Any text, UTF-8 encoded (not escaped: JSON.stringify's output, say). */
  text(s: string): this {
    this.ensure(s.length * 3);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
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
    b[p++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return this.text(JSON.stringify(s));
      b[p++] = c;
    }
    b[p++] = QUOTE;
    this.pos = p;
    return this;
  }

  /** The UTF-8 bytes of a string as a JSON string literal. */
  quoted(b: Uint8Array, start: number, end: number): this {
    this.ensure(2);
    this.buf[this.pos++] = QUOTE;
    this.escaped(b, start, end);
    this.buf[this.pos++] = QUOTE;
    return this;
  }

  /** UTF-8 bytes inside a string literal, escaped as JSON.stringify escapes (", \ and control characters). */
  escaped(b: Uint8Array, start: number, end: number): this {
    this.ensure(6 * (end - start) + 2);
    const out = this.buf;
    let p = this.pos;
    for (let i = start; i < end; i++) {
      const c = b[i]!;
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        out[p++] = c;
        continue;
      }
      out[p++] = BACKSLASH;
      const short = SHORT_ESCAPES[c];
      if (short !== undefined) out[p++] = short;
      else {
        out[p++] = 0x75; // u00XX, lower-case hex as JSON.stringify writes it
        out[p++] = 0x30;
        out[p++] = 0x30;
        out[p++] = HEX.charCodeAt(c >> 4);
        out[p++] = HEX.charCodeAt(c & 15);
      }
    }
    this.pos = p;
    return this;
  }
}

const HEX = '0123456789abcdef';
const SHORT_ESCAPES: Record<number, number> = {
  34: QUOTE,
  92: BACKSLASH,
  8: 0x62,
  9: 0x74,
  10: 0x6e,
  12: 0x66,
  13: 0x72,
};
