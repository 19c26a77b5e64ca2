import type { AccessType } from '../deposit/index.ts';
import { holdingChanges, type AppliedFile, type HoldingState, type Store } from '../store/index.ts';
import { HoldingsTable } from './holdings-table.ts';

/**
 * The entitlement answers' read model: every DOI with a live holding, its holdings (platform, access type, the
 * deposited vor links as JSON) in store order, in memory. An LMDB range read costs ~4 us a DOI here; a 100-DOI
 * request answered from LMDB could not come near the HTTP ceiling, this table can (docs/design.md,
 * "Entitlements").
 *
 * It follows the store: built from it once, then told of every file this process applies (Store.onApplied),
 * after the commit. A file applied by another process (the CLI's --ingest) shows as a gap in apply sequence
 * numbers, and the index is rebuilt from the store. test/entitlement/holdings-index.test.ts holds it to the store.
 *
 * Value of a DOI: its live holdings in platform-name order, each
 *   u16 platform number (this index's own numbering), u8 access code (ACCESS below), u32 vorLen, vor JSON bytes
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
  access: AccessType;
  /** value[vorStart, vorEnd) is the vor JSON; empty when the holding has no vor */
  vorStart: number;
  vorEnd: number;
}

export class HoldingsIndex {
  private table = new HoldingsTable();
  private readonly platformNames: string[] = [];
  private readonly platformNumbers = new Map<string, number>();
  /** the last apply sequence number reflected; -1 before the first build */
  private seq = -1;
  private checkedAt = 0;
  private readonly encoder = new TextEncoder();
  private readonly unsubscribe: () => void;
  /** builds so far (1 + rebuilds after another process wrote), for tests and logs */
  builds = 0;
  lastBuildMs = 0;

  constructor(
    private readonly store: Store,
    /** how often (ms) the store's apply sequence number is re-read for another process's writes */
    private readonly recheckMs = 250,
    /** a monotonic clock by default: a step of the wall clock must not stop the re-checks */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.unsubscribe = store.onApplied((files) => this.follow(files));
  }

  get size(): number {
    return this.table.size;
  }

  get memoryBytes(): number {
    return this.table.bytes;
  }

  /** Reads every live holding from the store (on first use, and after another process wrote). */
  build(): void {
    const t0 = performance.now();
    const { seq } = this.store.appliedSeq();
    const table = new HoldingsTable();
    let key: string | undefined;
    let parts: Uint8Array[] = [];
    for (const h of this.store.liveHoldings()) {
      if (h.doiKey !== key) {
        if (key !== undefined) table.set(key, concat(parts));
        key = h.doiKey;
        parts = [];
      }
      parts.push(this.part(h.platform, h.state));
    }
    if (key !== undefined) table.set(key, concat(parts));
    table.trim();
    this.table = table;
    this.seq = seq;
    this.builds++;
    this.lastBuildMs = performance.now() - t0;
  }

  /**
   * The value of a DOI key, or undefined when no platform holds it. Bytes stay valid after later changes. Call
   * refresh() first, once per request (a request reads one state of the index).
   */
  get(doiKey: string): Uint8Array | undefined {
    return this.table.get(doiKey);
  }

  /**
   * Where the value of a DOI starts in `arena` (HoldingsTable.valueAt), -1 when no platform holds it; by its key,
   * or by the UTF-8 bytes b[start, end) of a plain DOI in a request with their hash (ASCII letters folded).
   */
  valueAtKey(doiKey: string): number {
    return this.table.valueAtKey(doiKey);
  }

  valueAt(b: Uint8Array, start: number, end: number, hash: number): number {
    return this.table.valueAt(b, start, end, hash);
  }

  /** The bytes valueAt offsets point into (a reader takes it with its offsets: see HoldingsTable.valueAt). */
  get arena(): Uint8Array {
    return this.table.arenaBytes;
  }

  /** See HoldingsTable.touchSlot and touchRecord: hints, before a batch of valueAt calls. */
  touchSlot(hash: number): void {
    this.table.touchSlot(hash);
  }

  touchRecord(hash: number): void {
    this.table.touchRecord(hash);
  }

  /** Builds on first use; rebuilds when another process applied files (no commit of ours is on its way to us). */
  refresh(): void {
    if (this.seq < 0) return this.build(); // never built, or STALE
    const t = this.now();
    if (t - this.checkedAt < this.recheckMs) return;
    this.checkedAt = t;
    const { seq, pending } = this.store.appliedSeq();
    if (!pending && seq > this.seq) this.build();
  }

  close(): void {
    this.unsubscribe();
  }

  private follow(files: readonly AppliedFile[]): void {
    if (this.seq < 0) return; // not built yet (or STALE): the next use reads the store as it is then
    try {
      for (const file of files) {
        if (file.seq <= this.seq) continue; // a build already read it
        if (file.seq !== this.seq + 1) return this.build(); // another process applied the files in between
        for (const change of holdingChanges(file)) this.apply(change.doiKey, file.platform, change.state);
        this.seq = file.seq;
      }
    } catch (e) {
      // the files are committed whatever happens here: the next request reads the store again
      this.seq = STALE;
      this.failures++;
      this.lastFailure = String(e);
    }
  }
  /** failures to follow the store (each followed by a rebuild on the next request) */
  failures = 0;
  lastFailure: string | undefined;

  /** Puts one platform's holding of a DOI (undefined: removes it), keeping the value's platform order. */
  private apply(doiKey: string, platform: string, state: HoldingState | undefined): void {
    const old = this.table.get(doiKey);
    const number = this.numberOf(platform);
    const parts: Uint8Array[] = [];
    let placed = state === undefined;
    for (let at = 0; old && at < old.length; ) {
      const end = at + 7 + readU32(old, at + 3);
      const p = (old[at]! << 8) | old[at + 1]!;
      if (p !== number) {
        if (!placed && this.platformNames[p]! > platform) {
          parts.push(this.part(platform, state!));
          placed = true;
        }
        parts.push(old.subarray(at, end));
      }
      at = end;
    }
    if (!placed) parts.push(this.part(platform, state!));
    const value = concat(parts);
    if (old && equal(old, value)) return;
    this.table.set(doiKey, value);
  }

  private part(platform: string, state: HoldingState): Uint8Array {
    const code = ACCESS.indexOf(state.accessType);
    const vor = code >= OPEN_FROM && state.vor ? this.encoder.encode(JSON.stringify(state.vor)) : EMPTY;
    const out = new Uint8Array(7 + vor.length);
    const n = this.numberOf(platform);
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

  private numberOf(platform: string): number {
    let n = this.platformNumbers.get(platform);
    if (n === undefined) {
      n = this.platformNames.length;
      if (n > 0xffff) throw new Error('more than 65,536 platforms');
      this.platformNames.push(platform);
      this.platformNumbers.set(platform, n);
    }
    return n;
  }

  /** Every holding of the value bytes[start, end) (a whole value, or a range of the arena), in store order. */
  holdings(value: Uint8Array, start = 0, end = value.length): IndexedHolding[] {
    const out: IndexedHolding[] = [];
    for (let at = start; at < end; ) {
      const len = readU32(value, at + 3);
      out.push({
        platform: this.platformNames[(value[at]! << 8) | value[at + 1]!]!,
        accessType: ACCESS[value[at + 2]!],
        vorJson: len > 0 ? value.subarray(at + 7, at + 7 + len) : undefined,
      });
      at += 7 + len;
    }
    return out;
  }

  /**
   * The first holding answered from the deposit (open, free, permFree) in store order in value[start, end), or
   * undefined. `out` is filled (its vor range in `value`'s offsets) and returned: the hot path allocates nothing.
   */
  openPart(value: Uint8Array, out: OpenPart, start = 0, end = value.length): OpenPart | undefined {
    for (let at = start; at < end; ) {
      const len = readU32(value, at + 3);
      const code = value[at + 2]!;
      if (code >= OPEN_FROM) {
        out.access = ACCESS[code]!;
        out.vorStart = at + 7;
        out.vorEnd = at + 7 + len;
        return out;
      }
      at += 7 + len;
    }
    return undefined;
  }

  /** Every entry as holdings, for tests that compare the index with the store. */
  *entries(): Generator<[string, IndexedHolding[]]> {
    for (const [key, value] of this.table.entries()) yield [key, this.holdings(value)];
  }
}

const EMPTY = new Uint8Array(0);
/** seq of an index that failed to follow the store: rebuilt on its next use */
const STALE = -2;

/** The end of the value at `start` in an arena (its length is the u32 before it: holdings-table.ts). */
export function valueEnd(arena: Uint8Array, start: number): number {
  return start + readU32(arena, start - 4);
}

function readU32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

function concat(parts: Uint8Array[]): Uint8Array {
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

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
