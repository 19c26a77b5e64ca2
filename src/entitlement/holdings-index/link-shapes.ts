import { JsonBytes, sameBytes, type StoredHolding } from '../../store/index.ts';

/**
 * Vor links shared between DOIs. Most platforms build every vor URL around the DOI
 * (`https://host/doi/pdf/<DOI>`), so the store keeps only the parts around it (src/store/holding-codec.ts), and
 * those parts are the same for all of a platform's DOIs. The entitlement index keeps each distinct set of links
 * once, as its JSON with holes where the DOI goes, and a DOI's value holds the set's number: a DOI's vor JSON is
 * written when an answer serves it. Links some URL of which does not embed the DOI are kept with the DOI
 * (index-value.ts), as are all links once MAX_SHAPES sets are known (so a platform whose URLs vary by more than
 * the DOI cannot grow this table without bound).
 */
export const MAX_SHAPES = 65_536;

/** A LinkShapes as plain data, for another thread (the index build worker's result). */
export interface ShapesParts {
  /** each set's stored bytes (StoredHolding's vor range: tags and the parts around the DOI) */
  raw: Uint8Array[];
  /** each set's JSON in pieces: the DOI's escaped spelling goes between two pieces */
  pieces: Uint8Array[][];
  /** each set's bytes of pieces */
  bytes: number[];
}

/** sets compared by their bytes before a string of them is made: a platform's recent few */
const RECENT = 8;

export class LinkShapes {
  private readonly ids = new Map<string, number>();
  private readonly recent: number[] = [];
  private readonly json = new JsonBytes(1024);
  private readonly holes: number[] = [];

  constructor(private readonly p: ShapesParts = { raw: [], pieces: [], bytes: [] }) {
    p.raw.forEach((raw, id) => this.ids.set(latin1(raw, 0, raw.length), id));
  }

  parts(): ShapesParts {
    return this.p;
  }

  get size(): number {
    return this.p.raw.length;
  }

  /** The number of h's links (h open, with links), or -1 when they are to be kept with the DOI. */
  idOf(h: StoredHolding): number {
    const v = h.value;
    const start = h.vorStart;
    const end = h.vorEnd;
    const { raw } = this.p;
    for (let i = 0; i < this.recent.length; i++) {
      const id = this.recent[i]!;
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
      const pieces = this.piecesOf(h);
      this.p.pieces.push(pieces);
      this.p.bytes.push(pieces.reduce((n, piece) => n + piece.length, 0));
      this.ids.set(key, id);
    }
    this.recent.unshift(id);
    if (this.recent.length > RECENT) this.recent.pop();
    return id;
  }

  /**
   * Writes the vor JSON of set `id` for the DOI spelled doi[start, end) (JSON-escaped already), or, with `upper`,
   * spelled as those bytes with ASCII letters in upper case.
   */
  write(out: JsonBytes, id: number, doi: Uint8Array, start: number, end: number, upper: boolean): void {
    const pieces = this.p.pieces[id]!;
    const last = pieces.length - 1;
    out.ensure(this.p.bytes[id]! + last * (end - start)); // once: then plain loops (a set() per piece cost more)
    const buf = out.buf;
    let p = out.pos;
    for (let i = 0; ; i++) {
      const piece = pieces[i]!;
      for (let k = 0; k < piece.length; k++) buf[p++] = piece[k]!;
      if (i === last) break;
      if (upper) {
        for (let k = start; k < end; k++) {
          const c = doi[k]!;
          buf[p++] = c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
        }
      } else for (let k = start; k < end; k++) buf[p++] = doi[k]!;
    }
    out.pos = p;
  }

  private piecesOf(h: StoredHolding): Uint8Array[] {
    const { json, holes } = this;
    json.reset();
    holes.length = 0;
    h.writeVorTemplate(json, holes);
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (const at of holes) {
      pieces.push(json.buf.slice(from, at));
      from = at;
    }
    pieces.push(json.buf.slice(from, json.pos));
    return pieces;
  }
}

/** b[start, end) as a string of one char per byte: a Map key. */
function latin1(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i]!);
  return s;
}
