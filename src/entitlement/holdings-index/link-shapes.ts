import { type Libc, libc } from '../../base/index.ts';
import { JsonBytes, sameBytes } from '../../bytes/index.ts';
import type { StoredHolding } from '../../store/index.ts';

/**
 * Vor links shared between DOIs. Most platforms build every vor URL around the DOI
 * (`https://host/doi/pdf/<DOI>`), so the store keeps only the parts around it (src/store/holdings/holding-codec.ts), and
 * those parts are the same for all of a platform's DOIs. The entitlement index keeps each distinct set of links
 * once, as its JSON with holes where the DOI goes, and a DOI's value holds the set's number: a DOI's vor JSON is
 * written when an answer serves it. Links some URL of which does not embed the DOI are kept with the DOI
 * (index-value.ts), as are all links once MAX_SHAPES sets are known (so a platform whose URLs vary by more than
 * the DOI cannot grow this table without bound).
 */
const MAX_SHAPES = 65_536;

/** A LinkShapes as plain data, for another thread (the index build worker's result). */
export interface ShapesParts {
  /** each set's stored bytes (StoredHolding's vor range: tags and the parts around the DOI) */
  raw: Uint8Array[];
  /** every set's JSON pieces, one after another: flat[0, flatEnd) */
  flat: Uint8Array;
  flatEnd: number;
  /**
   * each set's pieces as bounds in `flat`: piece i is flat[b[i], b[i + 1]), and the DOI's escaped spelling goes
   * between two pieces
   */
  bounds: number[][];
}

/** sets compared by their bytes before a string of them is made: a platform's recent few */
const RECENT = 4;

export class LinkShapes {
  private readonly ids = new Map<string, number>();
  /** by platform number */
  private readonly recent: number[][] = [];
  private readonly json = new JsonBytes(1024);
  private readonly holes: number[] = [];
  /** where p.flat starts, and the last output buffer written to and where it starts (for native copies) */
  private flatAddress = 0;
  private outBuf: Uint8Array | undefined;
  private outAddress = 0;

  constructor(
    private readonly p: ShapesParts = { raw: [], flat: new Uint8Array(4096), flatEnd: 0, bounds: [] },
    /**
     * pieces are copied by libc's memcpy where it is there: a few native calls of 8-12 ns beat a loop over a link
     * set's 100-200 bytes (1 ns a byte), which was a third of a 100-open-DOI request
     */
    private readonly native: Libc | null = libc(),
  ) {
    p.raw.forEach((raw, id) => this.ids.set(latin1(raw, 0, raw.length), id));
    this.flatAddress = native ? native.address(p.flat) : 0;
  }

  parts(): ShapesParts {
    return this.p;
  }

  get size(): number {
    return this.p.raw.length;
  }

  /**
   * The number of h's links (h open, with links, of the platform numbered `platform`), or -1 when they are to be
   * kept with the DOI.
   */
  idOf(h: StoredHolding, platform: number): number {
    const v = h.value;
    const start = h.vorStart;
    const end = h.vorEnd;
    const { raw } = this.p;
    // a platform's few recent sets first, by their bytes: one platform has a set or two (with and without a second
    // link), and twenty platforms passed a shared list of eight (a string and a map lookup per holding then)
    const recent = (this.recent[platform] ??= []);
    for (let i = 0; i < recent.length; i++) {
      const id = recent[i]!;
      const r = raw[id]!;
      if (sameBytes(r, 0, r.length, v, start, end)) return id;
    }
    if (!h.everyLinkEmbedsDoi) return -1;
    const key = latin1(v, start, end);
    let id = this.ids.get(key);
    if (id === undefined) {
      if (raw.length >= MAX_SHAPES) return -1;
      id = raw.length;
      raw.push(v.slice(start, end));
      this.p.bounds.push(this.addPieces(h));
      this.ids.set(key, id);
    }
    recent.unshift(id);
    if (recent.length > RECENT) recent.pop();
    return id;
  }

  /**
   * Writes the vor JSON of set `id` for the DOI spelled doi[start, end) (JSON-escaped already), or, with `upper`,
   * spelled as those bytes with ASCII letters in upper case.
   */
  write(out: JsonBytes, id: number, doi: Uint8Array, start: number, end: number, upper: boolean): void {
    const b = this.p.bounds[id]!;
    const last = b.length - 1;
    out.ensure(b[last]! - b[0]! + (last - 1) * (end - start)); // once: then plain loops and copies
    const buf = out.buf;
    const flat = this.p.flat;
    const native = this.native;
    if (native && buf !== this.outBuf) {
      this.outBuf = buf;
      this.outAddress = native.address(buf);
    }
    let p = out.pos;
    for (let i = 0; ; i++) {
      const from = b[i]!;
      const n = b[i + 1]! - from;
      if (native) native.memcpy(this.outAddress + p, this.flatAddress + from, n);
      else for (let k = 0; k < n; k++) buf[p + k] = flat[from + k]!;
      p += n;
      if (i + 1 === last) break;
      if (upper) {
        for (let k = start; k < end; k++) {
          const c = doi[k]!;
          buf[p++] = c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
        }
      } else for (let k = start; k < end; k++) buf[p++] = doi[k]!;
    }
    out.pos = p;
  }

  /** Adds h's links as JSON pieces to flat; returns their bounds there. */
  private addPieces(h: StoredHolding): number[] {
    const { json, holes } = this;
    json.reset();
    holes.length = 0;
    h.writeVorTemplate(json, holes);
    this.reserveFlat(json.pos);
    const p = this.p;
    const base = p.flatEnd;
    p.flat.set(json.buf.subarray(0, json.pos), base);
    p.flatEnd += json.pos;
    return [base, ...holes.map((at) => base + at), p.flatEnd];
  }

  private reserveFlat(n: number): void {
    const p = this.p;
    if (p.flatEnd + n <= p.flat.length) return;
    const next = new Uint8Array(Math.max(2 * p.flat.length, p.flatEnd + n));
    next.set(p.flat.subarray(0, p.flatEnd));
    p.flat = next;
    this.flatAddress = this.native ? this.native.address(next) : 0;
  }
}

/** b[start, end) as a string of one char per byte: a Map key. */
function latin1(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i]!);
  return s;
}
