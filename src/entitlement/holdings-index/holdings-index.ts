import { JsonBytes, sameBytes } from '../../bytes/index.ts';
import { foldedHash, plainDoiKey } from '../../doi/index.ts';
import { type AppliedFile, type Store, type StoredHolding, storedChanges } from '../../store/index.ts';
import { type RecordView, recordView } from './arena-record.ts';
import type { BuildEvents, BuiltIndex, IndexBuilder } from './background-build.ts';
import { HoldingsTable } from './holdings-table.ts';
import { readIndexRecords } from './index-build.ts';
import {
  holdingsOf,
  type IndexedHolding,
  type OpenPart,
  PlatformNumbers,
  withHolding,
  writeHolding,
  writeLinks,
} from './index-value.ts';
import { LinkShapes } from './link-shapes.ts';

/** seq: what the DOIs read reflect (a file told past it, or a bigger seq in the store: another process wrote); told: every file since the build began */
type Warming = { seq: number; told: AppliedFile[]; cancel(): void };

/** DOIs a warming table keeps before it starts again (a few MB) */
const WARM_MAX_DOIS = 100_000;
/** how long after a build that failed everywhere the next one starts */
const RETRY_MS = 60_000;
/** seq of an index that failed to follow the store: read again on its next use */
const STALE = -2;
const decoder = new TextDecoder();

/**
 * The entitlement answers' read model: every DOI with a live holding and its holdings (index-value.ts), in memory,
 * since an LMDB range read (~4 us a DOI) would keep a 100-DOI request far from the HTTP ceiling. It follows the
 * store: read whole once, then told of every file this process applies (Store.onApplied); another process's
 * files show as a gap in apply sequence numbers and the store is read again. With a background builder (the
 * daemon's worker thread) the index is "warming" during a read: lookups the table misses read the store and are
 * kept, files told are applied to them and replayed on the build when it lands. docs/design.md, "Entitlements";
 * test/entitlement/holdings-index/holdings-index.test.ts and index-warming.test.ts hold it to the store.
 */
export class HoldingsIndex {
  private table = new HoldingsTable();
  private numbers = new PlatformNumbers();
  private shapes = new LinkShapes();
  private readonly part = new JsonBytes(256);
  private readonly scratch = new JsonBytes(1024);
  private readonly view = recordView();
  /** the last apply sequence number reflected; -1 before the first build, STALE after a failure to follow */
  private seq = -1;
  private checkedAt = 0;
  private readonly unsubscribe: () => void;
  private background: { builder: IndexBuilder; events: BuildEvents } | undefined;
  private warm: Warming | undefined;
  private closed = false;
  /** reads of the whole store begun (1 + rebuilds after another process wrote), for metrics and tests */
  builds = 0;
  lastBuildMs = 0;
  /** moves whenever what the index knew was dropped (a build, another process's files): answers cached over it go */
  generation = 0;
  /** failures to follow the store or to build elsewhere (each healed by reading the store again) */
  failures = 0;
  lastFailure: string | undefined;

  constructor(
    private readonly store: Store,
    /** how often (ms) the store's apply sequence number is re-read for another process's writes */
    private readonly recheckMs = 250,
    /** a monotonic clock by default: a step of the wall clock must not stop the re-checks */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.unsubscribe = store.onApplied((files) => this.follow(files));
  }

  /** DOIs in the table: every DOI held once complete, those read so far while warming */
  get size(): number {
    return this.table.size;
  }

  get memoryBytes(): number {
    return this.table.bytes;
  }

  /** false while warming (lookups read the store for what the table lacks) */
  get complete(): boolean {
    return this.warm === undefined && this.seq >= 0;
  }

  /** Reads every live holding from the store on this thread (a background build runs this too, elsewhere). */
  build(): void {
    const t0 = performance.now();
    this.warm?.cancel();
    this.warm = undefined;
    const { seq } = this.store.appliedSeq();
    const builder = HoldingsTable.builder();
    readIndexRecords(this.store, this.numbers, this.shapes, builder);
    this.table = builder.finish();
    this.seq = seq;
    this.builds++;
    this.generation++;
    this.lastBuildMs = performance.now() - t0;
  }

  /** A built index as a build elsewhere hands it over (tests give one to a warming index); this index is spent after. */
  exported(): BuiltIndex {
    return {
      seq: this.seq,
      table: this.table.parts(),
      platformNames: this.numbers.names,
      shapes: this.shapes.parts(),
      ms: this.lastBuildMs,
    };
  }

  /** From now on builds run through `builder`, warming meanwhile; the first starts now unless one was made. */
  buildInBackground(builder: IndexBuilder, events: BuildEvents): void {
    this.background = { builder, events };
    if (this.seq < 0 && !this.warm) this.beginWarming();
  }

  /**
   * The ref of a DOI's record (read it with read()), -1 when no platform holds it; by its key, or by the UTF-8
   * bytes b[start, end) of a plain DOI in a request with their hash (ASCII letters folded). While warming a lookup
   * may add to the table; records read before stay as they were.
   */
  refOfKey(doiKey: string): number {
    const ref = this.table.refOfKey(doiKey);
    return ref >= 0 || !this.warm ? ref : this.readThrough(doiKey);
  }

  refAt(b: Uint8Array, start: number, end: number, hash: number): number {
    const ref = this.table.refAt(b, start, end, hash);
    if (ref >= 0 || !this.warm) return ref;
    const key = plainDoiKey(decoder.decode(b.subarray(start, end)));
    return key === undefined ? -1 : this.readThrough(key);
  }

  /** Fills `view` with the record of a ref: its key and value, in bytes that stay valid after later changes. */
  read(ref: number, view: RecordView): RecordView {
    return this.table.read(ref, view);
  }

  /** The value of a DOI key, or undefined when no platform holds it. Bytes stay valid after later changes. */
  get(doiKey: string): Uint8Array | undefined {
    const ref = this.refOfKey(doiKey);
    if (ref < 0) return undefined;
    const v = this.table.read(ref, this.view);
    return v.bytes.subarray(v.valueStart, v.valueEnd);
  }

  /** Writes the vor JSON of an open part (index-value.ts's openPartOf) of a record read with read(). */
  writeLinks(out: JsonBytes, record: RecordView, part: OpenPart): void {
    writeLinks(out, this.shapes, record.bytes, record.keyStart, record.keyEnd, part);
  }

  /** See HoldingsTable.touchSlot and touchRecord: hints, before a batch of lookups. */
  touchSlot(hash: number): void {
    this.table.touchSlot(hash);
  }
  touchRecord(hash: number): void {
    this.table.touchRecord(hash);
  }

  /** Once per request, before its lookups: builds on first use, reads the store again after another process wrote. */
  refresh(): void {
    if (this.closed) return;
    if (this.warm) return this.refreshWarming(this.warm);
    if (this.seq < 0) return this.rebuild(); // never built, or STALE
    if (this.othersWrotePast(this.seq) !== undefined) this.rebuild();
  }

  /** The store's apply seq if another process took it past `known` (no commit of ours pending); once per recheckMs. */
  private othersWrotePast(known: number): number | undefined {
    const t = this.now();
    if (t - this.checkedAt < this.recheckMs) return undefined;
    this.checkedAt = t;
    const { seq, pending } = this.store.appliedSeq();
    return !pending && seq > known ? seq : undefined;
  }

  close(): void {
    this.closed = true;
    this.warm?.cancel();
    this.warm = undefined;
    this.unsubscribe();
  }

  /** The holdings of a record (read()), vor JSON written out; with `allowed`, of platforms it marks 1. */
  holdings(record: RecordView, allowed?: Uint8Array): IndexedHolding[] {
    const { bytes, keyStart, keyEnd, valueStart, valueEnd } = record;
    return holdingsOf(this.numbers.names, this.shapes, bytes, keyStart, keyEnd, valueStart, valueEnd, allowed);
  }

  /** The holdings of a DOI key (none: undefined), for tests. */
  holdingsOfKey(doiKey: string): IndexedHolding[] | undefined {
    const ref = this.refOfKey(doiKey);
    return ref < 0 ? undefined : this.holdings(this.table.read(ref, recordView()));
  }

  /** The platform numbering of the values (it changes when a build lands): index-value.ts reads them with it. */
  get platformNames(): readonly string[] {
    return this.numbers.names;
  }

  /** Every entry as holdings, for tests that compare the index with the store. */
  *entries(): Generator<[string, IndexedHolding[]]> {
    for (const r of this.table.records())
      yield [decoder.decode(r.bytes.subarray(r.keyStart, r.keyEnd)), this.holdings(r)];
  }

  private rebuild(): void {
    if (this.background) this.beginWarming();
    else this.build();
  }

  // --- warming: a build runs elsewhere, lookups the table misses read the store ---

  private beginWarming(): void {
    if (this.closed) return;
    const background = this.background!;
    this.warm?.cancel();
    const run = background.builder(this.store);
    const warm: Warming = { seq: this.store.appliedSeq().seq, told: [], cancel: run.cancel };
    this.warm = warm;
    this.table = new HoldingsTable();
    this.builds++;
    this.generation++;
    run.done.then(
      (built) => this.land(warm, built),
      (e) => this.buildFailed(warm, e),
    );
  }

  private refreshWarming(warm: Warming): void {
    if (this.table.size > WARM_MAX_DOIS) this.table = new HoldingsTable(); // a cache: it is not to become a second index
    const seq = this.othersWrotePast(warm.seq);
    if (seq !== undefined) this.dropWarmReads(warm, seq);
  }

  /** Another process applied files: what was read may be stale (the build lands with a gap, and runs again). */
  private dropWarmReads(warm: Warming, seq: number): void {
    this.table = new HoldingsTable();
    warm.seq = seq;
    this.generation++;
  }

  /** A DOI the warming table lacks, read from the store and kept (-1: no platform holds it). */
  private readThrough(doiKey: string): number {
    const value = this.part;
    value.reset();
    for (const h of this.store.storedHoldings({ doiKey })) {
      const platform = decoder.decode(h.key.subarray(h.platformStart));
      writeHolding(value, this.numbers.numberOf(platform), h, this.shapes, this.scratch);
    }
    if (value.pos === 0) return -1;
    this.table.set(doiKey, value.buf.slice(0, value.pos));
    return this.table.refOfKey(doiKey);
  }

  /** A build from elsewhere: the files told since its read are replayed on it, and it replaces the warming table. */
  private land(warm: Warming, built: BuiltIndex): void {
    if (this.warm !== warm || this.closed) return; // replaced by a later build, or closed
    this.warm = undefined;
    this.table = HoldingsTable.fromParts(built.table);
    this.numbers = new PlatformNumbers(built.platformNames);
    this.shapes = new LinkShapes(built.shapes);
    this.seq = built.seq;
    this.lastBuildMs = built.ms;
    this.follow(warm.told);
    if (!this.complete) return; // another process's files between the build's read and ours: a new build runs
    if (warm.seq > this.seq) {
      // another process's files after them (seen while warming): the build lacks them, so it is read again
      this.seq = STALE;
      return this.rebuild();
    }
    this.background!.events.built({ dois: this.size, ms: built.ms, bytes: this.memoryBytes });
  }

  /** A build elsewhere failed: the index is built here instead (it blocks once, and answers are whole after). */
  private buildFailed(warm: Warming, e: unknown): void {
    if (this.warm !== warm || this.closed) return;
    this.background!.events.failed(this.noteFailure(e));
    try {
      this.build();
    } catch (again) {
      // unreadable here too: keep answering from the store (warming, nothing in flight) and try again later
      this.background!.events.failed(this.noteFailure(again));
      this.warm = { seq: this.store.appliedSeq().seq, told: [], cancel: () => clearTimeout(retry) };
      this.seq = STALE;
      this.dropWarmReads(this.warm, this.warm.seq);
      const retry = setTimeout(() => this.beginWarming(), RETRY_MS);
      retry.unref?.();
      return;
    }
    this.background!.events.built({ dois: this.size, ms: this.lastBuildMs, bytes: this.memoryBytes });
  }

  private follow(files: readonly AppliedFile[]): void {
    if (this.warm) return this.followWarming(this.warm, files);
    if (this.seq < 0) return; // not built yet (or STALE): the next use reads the store as it is then
    try {
      for (const file of files) {
        if (file.seq <= this.seq) continue; // a build already read it
        if (file.seq !== this.seq + 1) {
          this.seq = STALE; // another process applied the files in between
          return this.rebuild();
        }
        this.applyFile(file, false);
        this.seq = file.seq;
      }
    } catch (e) {
      // the files are committed whatever happens here: the next request reads the store again
      this.seq = STALE;
      this.noteFailure(e);
    }
  }

  private noteFailure(e: unknown): string {
    this.failures++;
    return (this.lastFailure = String(e));
  }

  /** Files told while warming: kept for the build, and applied to the DOIs read so far (the others are read later). */
  private followWarming(warm: Warming, files: readonly AppliedFile[]): void {
    warm.told.push(...files);
    for (const file of files) {
      if (file.seq > warm.seq + 1) this.dropWarmReads(warm, file.seq);
      else warm.seq = Math.max(warm.seq, file.seq);
      try {
        this.applyFile(file, true);
      } catch (e) {
        this.dropWarmReads(warm, warm.seq);
        this.noteFailure(e);
      }
    }
  }

  /**
   * Puts each record's holding of the file's platform in place (a removal takes it out), keeping each value's
   * platform order; `readOnly`: only DOIs the table holds (a warming table keeps what it read, nothing more).
   */
  private applyFile(file: AppliedFile, readOnly: boolean): void {
    const number = this.numbers.numberOf(file.platform);
    const names = this.numbers.names;
    for (const { key, holding } of storedChanges(file)) {
      const keyEnd = key.indexOf(0);
      const ref = this.table.refAt(key, 0, keyEnd, foldedHash(key, 0, keyEnd));
      if (ref < 0 && (readOnly || !holding)) continue;
      const old = ref < 0 ? undefined : this.table.read(ref, this.view);
      const oldValue = old?.bytes.subarray(old.valueStart, old.valueEnd);
      const value = withHolding(names, oldValue, number, holding && this.partOf(number, holding));
      if (oldValue && sameBytes(oldValue, 0, oldValue.length, value, 0, value.length)) continue;
      this.table.setBytes(key, 0, keyEnd, value);
    }
  }

  /** One holding's bytes (writeHolding's), in a buffer reused for the next. */
  private partOf(number: number, holding: StoredHolding): Uint8Array {
    this.part.reset();
    writeHolding(this.part, number, holding, this.shapes, this.scratch);
    return this.part.buf.subarray(0, this.part.pos);
  }
}
