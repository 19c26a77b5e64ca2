import type { JsonBytes } from '../../bytes/index.ts';
import { ACCESS_CODES, CONTENT_CODES, isLive } from './holding-codec.ts';

/**
 * JSON written straight from a stored holding's bytes, nothing decoded into objects: the fast paths of --dump
 * and of the entitlement index's build, where a million holdings are read. The value layout is holding-codec.ts's;
 * test/store/holdings/holding-json.test.ts holds every writer here to JSON.stringify of the decoded holding.
 */

const ACCESS_JSON = ACCESS_CODES.map((a) => (a ? `"${a}"` : ''));
const CONTENT_JSON = CONTENT_CODES.map((c) => (c ? `,"contentType":"${c}"}` : '}'));

/** One stored live holding read in place (Store.storedHoldings): where its parts are. */
export class StoredHolding {
  key: Uint8Array = EMPTY;
  value: Uint8Array = EMPTY;
  /** key[0, doiKeyEnd) is the DOI key; the platform follows a 0 byte */
  doiKeyEnd = 0;
  /** ACCESS_CODES index (0: no access type) */
  access = 0;
  /** the DOI as deposited: doiBytes[doiStart, doiEnd) (the value's own spelling, or the key's) */
  doiBytes: Uint8Array = EMPTY;
  doiStart = 0;
  doiEnd = 0;
  vorCount = 0;
  private vorAt = 0;
  private stateEnd = 0;
  private updatedAt = 0;

  /** Points this reader at a stored key and value; false when the value is a tombstone. */
  read(key: Uint8Array, value: Uint8Array): boolean {
    if (!isLive(value)) return false;
    this.value = value; // varintAt reads it
    const p = this.varintAt(1); // the state's length
    this.updatedAt = p + this.lastVarint;
    this.readState(key, value, p, this.updatedAt);
    return true;
  }

  /**
   * Points this reader at a holding key and a live state in bytes[stateStart, stateEnd) (holding-codec.ts's
   * writeState layout): a stored value's, or an encoded record's (what an applied file tells). `updated` is not
   * known then.
   */
  readState(key: Uint8Array, bytes: Uint8Array, stateStart: number, stateEnd: number): void {
    this.key = key;
    this.value = bytes;
    this.doiKeyEnd = key.indexOf(0);
    this.stateEnd = stateEnd;
    let p = stateStart;
    const access = bytes[p++]!;
    this.access = access < ACCESS_CODES.length ? access : 0; // as the decoder reads a code it does not know: none
    p = this.varintAt(p);
    const doiLen = this.lastVarint;
    if (doiLen > 0) {
      this.doiBytes = bytes;
      this.doiStart = p;
      this.doiEnd = p + doiLen;
      p += doiLen;
    } else {
      this.doiBytes = key;
      this.doiStart = 0;
      this.doiEnd = this.doiKeyEnd;
    }
    p = this.varintAt(p);
    this.vorCount = this.lastVarint;
    this.vorAt = p;
  }

  /**
   * value[vorStart, vorEnd) are the stored links (each: tag, the URL or the parts around the DOI): bytes that do not
   * depend on the DOI when every URL embeds it (the entitlement index shares such links between DOIs).
   */
  get vorStart(): number {
    return this.vorAt;
  }
  get vorEnd(): number {
    return this.stateEnd;
  }

  /** Whether every vor URL embeds the DOI (stored as the parts around it): false without links. */
  get everyLinkEmbedsDoi(): boolean {
    const v = this.value;
    let p = this.vorAt;
    for (let i = 0; i < this.vorCount; i++) {
      const tag = v[p++]!;
      if (!(tag & 0x80)) return false;
      p = this.varintAt(p);
      p = this.varintAt(p + this.lastVarint);
      p += this.lastVarint;
    }
    return this.vorCount > 0;
  }

  get platformStart(): number {
    return this.doiKeyEnd + 1;
  }

  /** ms, the LastModified of the file that last changed the holding */
  get updated(): number {
    const b = this.value;
    const p = this.updatedAt;
    return (
      ((b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!) * 0x1000000 + ((b[p + 3]! << 16) | (b[p + 4]! << 8) | b[p + 5]!)
    );
  }

  /** `"paid"` ... as JSON, '' for none. */
  get accessJson(): string {
    return ACCESS_JSON[this.access]!;
  }

  /** The vor array as JSON.stringify writes the decoded state's vor (call only when vorCount > 0). */
  writeVor(out: JsonBytes): void {
    this.writeVorItems(out, undefined);
  }

  /**
   * writeVor with the DOI left out of the URLs: `holes` gets the position in `out` where each left-out DOI goes
   * (its JSON-escaped spelling completes the text). For links whose every URL embeds the DOI.
   */
  writeVorTemplate(out: JsonBytes, holes: number[]): void {
    this.writeVorItems(out, holes);
  }

  private writeVorItems(out: JsonBytes, holes: number[] | undefined): void {
    const v = this.value;
    let p = this.vorAt;
    out.ascii('[');
    for (let i = 0; i < this.vorCount; i++) {
      const tag = v[p++]!;
      out.ascii(i === 0 ? '{"url":"' : ',{"url":"');
      p = this.varintAt(p);
      out.escaped(v, p, p + this.lastVarint);
      p += this.lastVarint;
      if (tag & 0x80) {
        // the URL embeds the DOI: the parts before and after it are stored
        if (holes) holes.push(out.pos);
        else out.escaped(this.doiBytes, this.doiStart, this.doiEnd);
        p = this.varintAt(p);
        out.escaped(v, p, p + this.lastVarint);
        p += this.lastVarint;
      }
      out.ascii('"');
      out.ascii(CONTENT_JSON[tag & 0x7f] ?? '}'); // a code the decoder does not know: no contentType, as there
    }
    out.ascii(']');
  }

  private lastVarint = 0;
  /**
   * Reads the varint at p into lastVarint; returns the position after it. ByteReader's own, one reader moved along
   * the values, made --dump of 1M holdings 10-20% slower (measured in turns): this path keeps its own.
   */
  private varintAt(p: number): number {
    const v = this.value;
    let n = 0;
    for (let shift = 1; ; shift *= 128) {
      const b = v[p++]!;
      n += (b & 0x7f) * shift;
      if (b < 0x80) break;
    }
    this.lastVarint = n;
    return p;
  }
}

const EMPTY: Uint8Array = new Uint8Array(0);
