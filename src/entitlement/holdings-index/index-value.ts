import { JsonBytes } from '../../bytes/index.ts';
import type { AccessType } from '../../deposit/index.ts';
import type { StoredHolding } from '../../store/index.ts';
import type { LinkShapes } from './link-shapes.ts';

/**
 * The entitlement index's value of one DOI, written and read only here: its live holdings in platform-name
 * order, each
 *   varint platform number (PlatformNumbers below), u8 tag: access code (ACCESS) | links kind << 3, then by kind
 *     NONE         nothing
 *     SHAPE        varint shape (link-shapes.ts), the DOI spelled as its key
 *     SHAPE_UPPER  varint shape, the DOI spelled as its key with ASCII letters in upper case
 *     SHAPE_SPELT  varint shape, varint n, the DOI's spelling (n bytes, JSON-escaped)
 *     JSON         varint n, the vor JSON (n bytes)
 * Links are kept only where they are served from the deposit: open, free and permFree holdings. Most are one
 * shared shape and no spelling, so a DOI costs its key and a few bytes (issue 48: 48 bytes per DOI at 100M).
 */
export const ACCESS: readonly (AccessType | undefined)[] = [undefined, 'paid', 'open', 'free', 'permFree'];
const OPEN_FROM = 2; // codes >= this are answered from the deposit

const LINKS = { NONE: 0, SHAPE: 1, SHAPE_UPPER: 2, SHAPE_SPELT: 3, JSON: 4 } as const;
const ACCESS_MASK = 7;
const LINKS_SHIFT = 3;

export interface IndexedHolding {
  platform: string;
  accessType: AccessType | undefined;
  /** the deposited vor links as a JSON array (UTF-8), for open, free and permFree holdings that have them */
  vorJson: Uint8Array | undefined;
}

/** The first holding answered from the deposit in a value, as openPartOf finds it (no decoding, no allocation). */
export interface OpenPart {
  /** the holding's access code (ACCESS) */
  code: number;
  /** LINKS */
  links: number;
  shape: number;
  /** the spelling (SHAPE_SPELT) or the JSON (JSON): value[dataStart, dataEnd) */
  dataStart: number;
  dataEnd: number;
}

export function openPart(): OpenPart {
  return { code: 0, links: 0, shape: 0, dataStart: 0, dataEnd: 0 };
}

/** An index's own numbering of platform names (a value holds numbers; a build hands its numbering over with its table). */
export class PlatformNumbers {
  private readonly numbers = new Map<string, number>();

  constructor(readonly names: string[] = []) {
    names.forEach((name, n) => this.numbers.set(name, n));
  }

  numberOf(platform: string): number {
    let n = this.numbers.get(platform);
    if (n === undefined) {
      n = this.names.length;
      if (n > 0xffff) throw new Error('more than 65,536 platforms');
      this.names.push(platform);
      this.numbers.set(platform, n);
    }
    return n;
  }
}

/**
 * One holding's part of a value, from the stored holding read in place (a build, a file told, a DOI read through):
 * the one writer of the format above.
 */
export function writeHolding(
  out: JsonBytes,
  platformNumber: number,
  h: StoredHolding,
  shapes: LinkShapes,
  scratch: JsonBytes,
): void {
  out.varint(platformNumber);
  const code = h.access;
  if (code < OPEN_FROM || h.vorCount === 0) return out.u8(code);
  const shape = shapes.idOf(h, platformNumber);
  if (shape < 0) {
    scratch.reset();
    h.writeVor(scratch);
    out.u8(code | (LINKS.JSON << LINKS_SHIFT));
    out.varint(scratch.pos);
    out.copy(scratch.buf, 0, scratch.pos);
    return;
  }
  const spelling = spellingOf(h);
  out.u8(code | (spelling << LINKS_SHIFT));
  out.varint(shape);
  if (spelling !== LINKS.SHAPE_SPELT) return;
  scratch.reset();
  scratch.escaped(h.doiBytes, h.doiStart, h.doiEnd);
  out.varint(scratch.pos);
  out.copy(scratch.buf, 0, scratch.pos);
}

/** How a holding's DOI is spelled, against its key: SHAPE (as the key), SHAPE_UPPER, or SHAPE_SPELT (kept). */
function spellingOf(h: StoredHolding): number {
  const { doiBytes: d, doiStart, doiEnd, key: k, doiKeyEnd } = h;
  if (doiEnd - doiStart !== doiKeyEnd || needsEscape(k, 0, doiKeyEnd)) return LINKS.SHAPE_SPELT;
  if (d === k && doiStart === 0) return LINKS.SHAPE;
  let same = true;
  let upper = true;
  for (let i = 0; i < doiKeyEnd && (same || upper); i++) {
    const c = d[doiStart + i]!;
    const kc = k[i]!;
    if (c !== kc) same = false;
    if (c !== (kc >= 0x61 && kc <= 0x7a ? kc - 0x20 : kc)) upper = false;
  }
  return same ? LINKS.SHAPE : upper ? LINKS.SHAPE_UPPER : LINKS.SHAPE_SPELT;
}

function needsEscape(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c < 0x20 || c === 0x22 || c === 0x5c) return true;
  }
  return false;
}

let varintEnd = 0;
/** The varint at b[at]; varintEnd is where it ends. */
function varintAt(b: Uint8Array, at: number): number {
  let n = 0;
  for (let shift = 1; ; shift *= 128) {
    const c = b[at++]!;
    n += (c & 0x7f) * shift;
    if (c < 0x80) break;
  }
  varintEnd = at;
  return n;
}

/** Where the holding whose tag is at b[tagAt] ends. */
function holdingEnd(b: Uint8Array, tagAt: number): number {
  const links = b[tagAt]! >> LINKS_SHIFT;
  if (links === LINKS.NONE) return tagAt + 1;
  if (links === LINKS.JSON) {
    const n = varintAt(b, tagAt + 1);
    return varintEnd + n;
  }
  varintAt(b, tagAt + 1);
  if (links !== LINKS.SHAPE_SPELT) return varintEnd;
  const n = varintAt(b, varintEnd);
  return varintEnd + n;
}

/**
 * A value with one platform's holding put in place (`part`: writeHolding's bytes; undefined: taken out),
 * keeping platform-name order; `old` is the value before (undefined: none). An empty result means no platform
 * holds the DOI.
 */
export function withHolding(
  names: readonly string[],
  old: Uint8Array | undefined,
  platformNumber: number,
  part: Uint8Array | undefined,
): Uint8Array {
  const out = new JsonBytes(64);
  const platform = names[platformNumber]!;
  let placed = part === undefined;
  for (let at = 0; old && at < old.length; ) {
    const p = varintAt(old, at);
    const end = holdingEnd(old, varintEnd);
    if (p !== platformNumber) {
      if (!placed && names[p]! > platform) {
        out.bytes(part!);
        placed = true;
      }
      out.copy(old, at, end);
    }
    at = end;
  }
  if (!placed) out.bytes(part!);
  return out.buf.slice(0, out.pos);
}

/**
 * The first holding answered from the deposit (open, free, permFree) in store order in value[start, end), or
 * undefined; with `allowed`, of a platform it marks 1 (ConfiguredPlatforms). `out` is filled (its data range in
 * `value`'s offsets) and returned: the hot path allocates nothing.
 */
export function openPartOf(
  value: Uint8Array,
  out: OpenPart,
  start: number,
  end: number,
  allowed?: Uint8Array,
): OpenPart | undefined {
  for (let at = start; at < end; ) {
    const p = varintAt(value, at);
    const tagAt = varintEnd;
    const code = value[tagAt]! & ACCESS_MASK;
    const next = holdingEnd(value, tagAt);
    if (code >= OPEN_FROM && (!allowed || allowed[p] === 1)) {
      readLinks(value, tagAt, next, out);
      out.code = code;
      return out;
    }
    at = next;
  }
  return undefined;
}

/** The links of the holding whose tag is at value[tagAt] (ending at `end`) into `out`. */
function readLinks(value: Uint8Array, tagAt: number, end: number, out: OpenPart): void {
  const links = value[tagAt]! >> LINKS_SHIFT;
  out.links = links;
  out.dataStart = out.dataEnd = end;
  if (links === LINKS.NONE) return;
  if (links === LINKS.JSON) {
    varintAt(value, tagAt + 1);
    out.dataStart = varintEnd;
    return;
  }
  out.shape = varintAt(value, tagAt + 1);
  if (links === LINKS.SHAPE_SPELT) {
    varintAt(value, varintEnd);
    out.dataStart = varintEnd;
  }
}

/**
 * The vor JSON of an open part (openPartOf) written to `out`, from the record whose key is
 * bytes[keyStart, keyEnd) and whose value `part` was read from; nothing for a holding without links.
 */
export function writeLinks(
  out: JsonBytes,
  shapes: LinkShapes,
  bytes: Uint8Array,
  keyStart: number,
  keyEnd: number,
  part: OpenPart,
): void {
  switch (part.links) {
    case LINKS.NONE:
      return;
    case LINKS.JSON:
      out.copy(bytes, part.dataStart, part.dataEnd);
      return;
    case LINKS.SHAPE_SPELT:
      return shapes.write(out, part.shape, bytes, part.dataStart, part.dataEnd, false);
    default:
      return shapes.write(out, part.shape, bytes, keyStart, keyEnd, part.links === LINKS.SHAPE_UPPER);
  }
}

/**
 * Every holding of the value bytes[start, end) of the record whose key is bytes[keyStart, keyEnd), in store
 * order, vor JSON written out; with `allowed`, only those of platforms whose number it marks 1.
 */
export function holdingsOf(
  names: readonly string[],
  shapes: LinkShapes,
  bytes: Uint8Array,
  keyStart: number,
  keyEnd: number,
  start: number,
  end: number,
  allowed?: Uint8Array,
): IndexedHolding[] {
  const out: IndexedHolding[] = [];
  const part = holdingPart;
  const json = linksJson; // used within this call only: no buffer made per DOI asked
  for (let at = start; at < end; ) {
    const p = varintAt(bytes, at);
    const tagAt = varintEnd;
    const next = holdingEnd(bytes, tagAt);
    at = next;
    if (allowed && allowed[p] !== 1) continue;
    readLinks(bytes, tagAt, next, part);
    json.reset();
    writeLinks(json, shapes, bytes, keyStart, keyEnd, part);
    out.push({
      platform: names[p]!,
      accessType: ACCESS[bytes[tagAt]! & ACCESS_MASK],
      vorJson: json.pos > 0 ? json.buf.slice(0, json.pos) : undefined,
    });
  }
  return out;
}
const holdingPart = openPart();
const linksJson = new JsonBytes(256);
