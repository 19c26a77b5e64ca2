import type { AccessType, ContentType, VorItem } from '../deposit/index.ts';

/**
 * Compact binary value of one holding (bytes per holding is a tracked figure, DESIGN section 4):
 *
 *   u8 flags (bit0: live; a tombstone keeps only its history)
 *   varint stateLen, then the state: u8 access | varint doiLen + DOI (0 when equal to the key) | varint vorCount,
 *     per item: u8 (contentType code | 0x80 when the URL embeds the DOI), varint len + bytes (the URL, or the parts
 *     before and after the DOI)
 *   u48 updated (ms, LastModified of the file that last changed the holding)
 *   events to the end, each: u8 kind, u48 time (ms), varint fileSeq, u8 oldAccess, u8 newAccess
 *
 * The state bytes come first so that "record equal to the stored state" is one byte comparison, no decode.
 */

export const ACCESS_CODES: readonly (AccessType | undefined)[] = [undefined, 'paid', 'open', 'free', 'permFree'];
const CONTENT_CODES: readonly (ContentType | undefined)[] = [undefined, 'application/pdf', 'text/html', 'application/epub+zip', 'other'];
const accessCode = new Map(ACCESS_CODES.map((a, i) => [a, i]));
const contentCode = new Map(CONTENT_CODES.map((c, i) => [c, i]));

export type EventKind = 'added' | 'updated' | 'removed' | 're-added';
const EVENT_KINDS: readonly EventKind[] = ['added', 'updated', 'removed', 're-added'];

export interface HoldingEvent {
  kind: EventKind;
  time: number;
  fileSeq: number;
  oldAccess?: AccessType;
  newAccess?: AccessType;
}

export interface HoldingState {
  doi: string;
  accessType?: AccessType;
  vor?: VorItem[];
}

export interface DecodedHolding {
  live: boolean;
  /** present when live */
  state?: HoldingState;
  updated: number;
  events: HoldingEvent[];
}

const EVENT_MAX = 1 + 6 + 5 + 2;
const utf8 = new TextEncoder();
const textDecoder = new TextDecoder();

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
  /** An event from codes (the write path, which never decodes access types). */
  eventCodes(kind: EventKind, time: number, fileSeq: number, oldAccess: number, newAccess: number): void {
    this.ensure(EVENT_MAX);
    this.u8(EVENT_KINDS.indexOf(kind) + 1);
    this.u48(time);
    this.varint(fileSeq);
    this.u8(oldAccess);
    this.u8(newAccess);
  }
  event(e: HoldingEvent): void {
    this.ensure(EVENT_MAX);
    this.u8(EVENT_KINDS.indexOf(e.kind) + 1);
    this.u48(e.time);
    this.varint(e.fileSeq);
    this.u8(accessCode.get(e.oldAccess) ?? 0);
    this.u8(accessCode.get(e.newAccess) ?? 0);
  }
}

class ByteReader {
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
    return ((b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!) * 0x1000000 + ((b[p + 3]! << 16) | (b[p + 4]! << 8) | b[p + 5]!);
  }
  str(): string {
    const n = this.varint();
    const s = textDecoder.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
}

/** Writes the state part of a live holding (access, DOI when it differs from the key, vor). */
export function writeState(w: ByteWriter, key: string, doi: string, accessType: AccessType | undefined, vor: VorItem[] | undefined): void {
  w.u8(accessTypeCode(accessType));
  if (doi === key) w.varint(0);
  else w.str(doi);
  if (!vor) {
    w.varint(0);
    return;
  }
  w.varint(vor.length);
  for (const item of vor) {
    const ct = contentTypeCode(item.contentType);
    const url = item.url;
    // URLs usually embed the DOI, most often at the end: store only what surrounds it
    const at = url.endsWith(doi) ? url.length - doi.length : url.indexOf(doi);
    if (at < 0) {
      w.u8(ct);
      w.str(url);
    } else {
      w.u8(ct | 0x80);
      w.strRange(url, 0, at);
      w.strRange(url, at + doi.length, url.length);
    }
  }
}

/** ACCESS_CODES as a switch: called once per record, where a Map lookup shows in profiles. */
function accessTypeCode(a: AccessType | undefined): number {
  switch (a) {
    case 'paid':
      return 1;
    case 'open':
      return 2;
    case 'free':
      return 3;
    case 'permFree':
      return 4;
    default:
      return 0;
  }
}

/** CONTENT_CODES as a switch (see accessTypeCode). */
function contentTypeCode(c: ContentType | undefined): number {
  switch (c) {
    case 'application/pdf':
      return 1;
    case 'text/html':
      return 2;
    case 'application/epub+zip':
      return 3;
    case 'other':
      return 4;
    default:
      return 0;
  }
}

/** Offsets of a stored value's parts, read without decoding anything. */
export interface ValueLayout {
  live: boolean;
  stateStart: number;
  stateEnd: number;
  /** start of the event list (after `updated`) */
  eventsStart: number;
}

export function layoutOf(value: Uint8Array): ValueLayout {
  const r = new ByteReader(value, 1);
  const stateLen = r.varint();
  const stateStart = r.pos;
  const stateEnd = stateStart + stateLen;
  return { live: (value[0]! & 1) === 1, stateStart, stateEnd, eventsStart: stateEnd + 6 };
}

/** The access code of a stored value's state (0 for a tombstone or no access type). */
export function accessCodeOfValue(value: Uint8Array, layout: ValueLayout): number {
  return layout.live ? value[layout.stateStart]! : 0;
}

export function accessOfState(value: Uint8Array, layout: ValueLayout): AccessType | undefined {
  return layout.live ? ACCESS_CODES[value[layout.stateStart]!] : undefined;
}

export function decodeHolding(key: string, value: Uint8Array): DecodedHolding {
  const layout = layoutOf(value);
  const r = new ByteReader(value, layout.stateStart);
  let state: HoldingState | undefined;
  if (layout.live) {
    const accessType = ACCESS_CODES[r.u8()];
    const doiLen = r.varint();
    let doi = key;
    if (doiLen > 0) {
      doi = textDecoder.decode(value.subarray(r.pos, r.pos + doiLen));
      r.pos += doiLen;
    }
    const n = r.varint();
    let vor: VorItem[] | undefined;
    if (n > 0) {
      vor = [];
      for (let i = 0; i < n; i++) {
        const tag = r.u8();
        const url = tag & 0x80 ? r.str() + doi + r.str() : r.str();
        const contentType = CONTENT_CODES[tag & 0x7f];
        vor.push(contentType ? { url, contentType } : { url });
      }
    }
    state = { doi };
    if (accessType) state.accessType = accessType;
    if (vor) state.vor = vor;
  }
  r.pos = layout.stateEnd;
  const updated = r.u48();
  const events: HoldingEvent[] = [];
  while (r.pos < value.length) {
    const kind = EVENT_KINDS[r.u8() - 1]!;
    const time = r.u48();
    const fileSeq = r.varint();
    const oldAccess = ACCESS_CODES[r.u8()];
    const newAccess = ACCESS_CODES[r.u8()];
    const e: HoldingEvent = { kind, time, fileSeq };
    if (oldAccess) e.oldAccess = oldAccess;
    if (newAccess) e.newAccess = newAccess;
    events.push(e);
  }
  return { live: layout.live, state, updated, events };
}

export { ByteReader };
