import type { AccessType } from '../deposit/index.ts';
import type { HoldingState, JsonBytes, StoredHolding } from '../store/index.ts';

/**
 * The entitlement index's value of one DOI, written and read only here: its live holdings in platform-name
 * order, each
 *   u16 platform number (PlatformNumbers below), u8 access code (ACCESS), u32 vorLen, vor JSON bytes
 * The vor JSON is kept only where it is served from the deposit: open, free and permFree holdings.
 */
export const ACCESS: readonly (AccessType | undefined)[] = [undefined, 'paid', 'open', 'free', 'permFree'];
const OPEN_FROM = 2; // codes >= this are answered from the deposit

export interface IndexedHolding {
  platform: string;
  accessType: AccessType | undefined;
  /** the deposited vor links as a JSON array (UTF-8), for open, free and permFree holdings that have them */
  vorJson: Uint8Array | undefined;
}

/** Where the first holding answered from the deposit sits in a value (the route writes it without decoding). */
export interface OpenPart {
  /** the holding's access code (ACCESS) */
  code: number;
  /** value[vorStart, vorEnd) is the vor JSON; empty when the holding has no vor */
  vorStart: number;
  vorEnd: number;
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

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** One holding's bytes in a value. */
export function holdingPart(numbers: PlatformNumbers, platform: string, state: HoldingState): Uint8Array {
  const code = ACCESS.indexOf(state.accessType);
  const vor = code >= OPEN_FROM && state.vor ? encoder.encode(JSON.stringify(state.vor)) : EMPTY;
  const out = new Uint8Array(7 + vor.length);
  const n = numbers.numberOf(platform);
  out[0] = n >>> 8;
  out[1] = n & 0xff;
  out[2] = code;
  out[3] = vor.length >>> 24;
  out[4] = (vor.length >>> 16) & 0xff;
  out[5] = (vor.length >>> 8) & 0xff;
  out[6] = vor.length & 0xff;
  out.set(vor, 7);
  return out;
}

/** holdingPart of a stored holding read in place (the bulk build), appended to `out`. */
export function writeStoredPart(out: JsonBytes, platformNumber: number, h: StoredHolding): void {
  out.ensure(7);
  const at = out.pos;
  out.buf[at] = platformNumber >>> 8;
  out.buf[at + 1] = platformNumber & 0xff;
  out.buf[at + 2] = h.access;
  out.pos = at + 7;
  if (h.access >= OPEN_FROM && h.vorCount > 0) h.writeVor(out);
  const len = out.pos - at - 7;
  const b = out.buf; // writeVor may have moved it
  b[at + 3] = len >>> 24;
  b[at + 4] = (len >>> 16) & 0xff;
  b[at + 5] = (len >>> 8) & 0xff;
  b[at + 6] = len & 0xff;
}

/**
 * A value with one platform's holding put in place (state undefined: taken out), keeping platform-name order;
 * `old` is the value before (undefined: none). An empty result means no platform holds the DOI.
 */
export function withHolding(numbers: PlatformNumbers, old: Uint8Array | undefined, platform: string, state: HoldingState | undefined): Uint8Array {
  const number = numbers.numberOf(platform);
  const parts: Uint8Array[] = [];
  let placed = state === undefined;
  for (let at = 0; old && at < old.length; ) {
    const end = at + 7 + readU32(old, at + 3);
    const p = (old[at]! << 8) | old[at + 1]!;
    if (p !== number) {
      if (!placed && numbers.names[p]! > platform) {
        parts.push(holdingPart(numbers, platform, state!));
        placed = true;
      }
      parts.push(old.subarray(at, end));
    }
    at = end;
  }
  if (!placed) parts.push(holdingPart(numbers, platform, state!));
  return concat(parts);
}

/**
 * Every holding of the value bytes[start, end) (a whole value, or a range of an arena), in store order; with
 * `allowed`, only those of platforms whose number it marks 1 (ConfiguredPlatforms).
 */
export function holdingsOf(names: readonly string[], value: Uint8Array, start = 0, end = value.length, allowed?: Uint8Array): IndexedHolding[] {
  const out: IndexedHolding[] = [];
  for (let at = start; at < end; ) {
    const len = readU32(value, at + 3);
    if (allowed && allowed[(value[at]! << 8) | value[at + 1]!] !== 1) {
      at += 7 + len;
      continue;
    }
    out.push({
      platform: names[(value[at]! << 8) | value[at + 1]!]!,
      accessType: ACCESS[value[at + 2]!],
      vorJson: len > 0 ? value.subarray(at + 7, at + 7 + len) : undefined,
    });
    at += 7 + len;
  }
  return out;
}

/**
 * The first holding answered from the deposit (open, free, permFree) in store order in value[start, end), or
 * undefined; with `allowed`, of a platform it marks 1. `out` is filled (its vor range in `value`'s offsets) and
 * returned: the hot path allocates nothing.
 */
export function openPartOf(value: Uint8Array, out: OpenPart, start = 0, end = value.length, allowed?: Uint8Array): OpenPart | undefined {
  for (let at = start; at < end; ) {
    const len = readU32(value, at + 3);
    const code = value[at + 2]!;
    if (code >= OPEN_FROM && (!allowed || allowed[(value[at]! << 8) | value[at + 1]!] === 1)) {
      out.code = code;
      out.vorStart = at + 7;
      out.vorEnd = at + 7 + len;
      return out;
    }
    at += 7 + len;
  }
  return undefined;
}

function readU32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
