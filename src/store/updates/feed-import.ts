import { ABORT } from 'lmdb';
import { type Fault, fault } from '../../base/index.ts';
import type { ImportRow } from '../../update-record/index.ts';
import { bumpUpdatesGen, type StoreDbs, writeTransaction } from '../environment/index.ts';
import { ChangeFeedWriter, DEFAULT_KEEP_MS } from './change-feed.ts';
import {
  type IncomingUpdate,
  mergeWork,
  type ReplaceMode,
  type ReplaceReport,
  type UpdatesEntry,
} from './work-updates.ts';

/**
 * One import of an update feed with bounded memory: rows are written as they are read into the `importScratch`
 * sub-database (batched write transactions, one batch in flight), keyed by bytes `<import id> 0x00 <DOI key>
 * 0x00 <row number, u32>` so each work's rows come back together and in order (binary keys: lmdb-js's default
 * key encoding would split strings at control characters). `commit()` then merges them into `updates` in
 * ONE transaction (the feed replaces atomically, as before) and removes the scratch rows in the same
 * transaction. Memory holds one batch and, for a snapshot feed, the set of works seen.
 */
const BATCH_ROWS = 10_000;
/**
 * A snapshot feed that would withdraw more than this share of its stored updates is refused (unless the caller
 * allows it): a truncated or wrongly exported file must not silently unretract thousands of papers.
 */
const MAX_SNAPSHOT_SHRINK = 0.5;
/** below this many stored updates the guard does not apply (small or test feeds change freely) */
const SHRINK_GUARD_MIN = 100;
/** scratch rows of an import that died (crash, kill) are removed by a later import after this long */
const STALE_AFTER_MS = 6 * 3600_000;

/** one row as read: the work's DOI, the update (null: the work's list is the rows beside it), how it applies */
type ScratchRow = ImportRow;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FeedImport {
  private readonly id: string;
  private readonly prefix: Uint8Array;
  private readonly range: { start: Uint8Array; end: Uint8Array };
  private batch: [Uint8Array, ScratchRow][] = [];
  private inFlight: Promise<unknown> = Promise.resolve();
  private rows = 0;

  /**
   * `resume`: carry on an import begun earlier (a harvest window after a restart), whose `rows` rows are in the
   * scratch space; the caller checks `scratchRows()` against its own count first.
   */
  constructor(
    private readonly dbs: StoreDbs,
    private readonly origin: string,
    private readonly mode: ReplaceMode,
    now = Date.now(),
    resume?: { id: string; rows: number },
    /** how long a withdrawal stays in the change feed (change-feed.ts) */
    private readonly feedKeepMs = DEFAULT_KEEP_MS,
  ) {
    // the start time leads the id, so stale imports can be recognised; the random part keeps two apart
    this.id = resume?.id ?? `${now.toString(36).padStart(10, '0')}.${crypto.randomUUID()}`;
    this.rows = resume?.rows ?? 0;
    this.prefix = encoder.encode(`${this.id}\u0000`);
    this.range = { start: this.prefix, end: encoder.encode(`${this.id}\u0001`) };
    this.removeStale(now);
  }

  /** What names this import's scratch rows (kept by a harvest to resume it). */
  get importId(): string {
    return this.id;
  }

  /** Rows added so far (written or queued). */
  get rowsAdded(): number {
    return this.rows;
  }

  /** How many of this import's rows are in the scratch space (written ones only). */
  scratchRows(): number {
    // a copy of the range: lmdb-js keeps state in the options object it is given
    return this.dbs.importScratch.getKeysCount({ ...this.range });
  }

  /**
   * Removes this import's rows numbered `rows` and above: written by a resumed harvest after the last page it
   * saved, they would come again when that page is read again.
   */
  async truncateTo(rows: number): Promise<void> {
    await this.flush();
    const extra: Buffer[] = [];
    for (const key of this.dbs.importScratch.getKeys({ ...this.range })) {
      const k = key as Uint8Array;
      if (new DataView(k.buffer, k.byteOffset, k.byteLength).getUint32(k.length - 4) >= rows)
        extra.push(Buffer.from(k));
    }
    if (extra.length > 0)
      await writeTransaction(this.dbs, () => {
        for (const k of extra) this.dbs.importScratch.removeSync(k);
      });
    this.rows = rows;
  }

  /** Queues one row; resolves at once unless a batch had to be written (backpressure for the reader). */
  add(doiKey: string, row: ScratchRow): Promise<unknown> | undefined {
    this.batch.push([scratchKey(this.prefix, doiKey, this.rows++), row]);
    if (this.batch.length < BATCH_ROWS) return undefined;
    return this.writeBatch();
  }

  /** Writes the queued rows and resolves once they are in the scratch space (add() writes every BATCH_ROWS rows). */
  async flush(): Promise<void> {
    this.writeBatch();
    await this.inFlight;
  }

  private writeBatch(): Promise<unknown> {
    const rows = this.batch;
    this.batch = [];
    const previous = this.inFlight;
    this.inFlight = previous.then(() =>
      writeTransaction(this.dbs, () => {
        for (const [key, row] of rows) this.dbs.importScratch.putSync(key, row);
      }),
    );
    return previous; // wait for the batch before this one: at most one batch in flight
  }

  /**
   * Merges the scratch rows into `updates` and removes them, in one transaction. A snapshot that would withdraw
   * more than MAX_SNAPSHOT_SHRINK of the feed's updates applies nothing and returns a SNAPSHOT_SHRINK fault,
   * unless `allowShrink`. `dryRun`: the same merge, rolled back, scratch rows kept: what a commit would say now.
   */
  async commit(opts: { allowShrink?: boolean; dryRun?: boolean } = {}): Promise<ReplaceReport | Fault> {
    await this.flush();
    const { dbs, origin, mode, range } = this;
    // rows removed under a long import (a later import took them for a dead one's) must not commit a part
    const written = this.scratchRows();
    if (written !== this.rows) {
      await this.abort();
      return fault(
        'IMPORT_ROWS_LOST',
        `this ${origin} import wrote ${this.rows} rows but ${written} are left in the scratch space; nothing was changed`,
      );
    }
    const report: ReplaceReport = {
      worksTouched: 0,
      updatesAdded: 0,
      updatesChanged: 0,
      updatesWithdrawn: 0,
      updatesUnchanged: 0,
    };
    if (opts.dryRun && (mode !== 'snapshot' || opts.allowShrink)) return report; // only a snapshot can be refused
    let refused = false;
    // transactionSync: a callback returning ABORT rolls back (lmdb-js async transactions are batched and cannot);
    // an async transaction's callback would hold the event loop just as long
    const result = dbs.root.transactionSync(() => {
      const seen = mode === 'snapshot' ? new Set<string>() : undefined;
      const feed = new ChangeFeedWriter(dbs);
      const apply = (key: string, incoming: { doi: string; updates: IncomingUpdate[] } | undefined, upsert = false) => {
        const before = dbs.updates.get(key) as UpdatesEntry | undefined;
        const next = mergeWork(before, incoming, origin, report, upsert);
        if (next === before) return;
        report.worksTouched++;
        if (next === undefined) dbs.updates.removeSync(key);
        else {
          feed.record(key, before, next);
          dbs.updates.putSync(key, next);
        }
      };
      let current: string | undefined;
      let doi = '';
      let updates: IncomingUpdate[] = [];
      // a work is replaced when any of its rows says so; rows that are all upserts keep the feed's other updates
      // (a snapshot replaces every work whatever its rows say)
      let upsertOnly = true;
      for (const { key, value } of dbs.importScratch.getRange({ ...range })) {
        const k = key as Uint8Array;
        const doiKey = decoder.decode(k.subarray(this.prefix.length, k.length - 5));
        if (doiKey !== current) {
          if (current !== undefined) apply(current, { doi, updates }, mode === 'works' && upsertOnly);
          current = doiKey;
          updates = [];
          upsertOnly = true;
          seen?.add(doiKey);
        }
        const row = value as ScratchRow;
        doi = row.doi;
        if (!row.upsert) upsertOnly = false;
        if (row.update)
          updates.push(row.recordId !== undefined ? { ...row.update, recordId: row.recordId } : row.update);
      }
      if (current !== undefined) apply(current, { doi, updates }, mode === 'works' && upsertOnly);
      if (seen) {
        // a snapshot feed: works that had this feed's updates before but are absent now lose them
        for (const { key, value } of dbs.updates.getRange()) {
          if (!seen.has(key as string) && (value as UpdatesEntry).updates.some((u) => u.origin === origin))
            apply(key as string, undefined);
        }
      }
      this.removeOwnRows();
      const stored = storedBefore(report);
      refused =
        mode === 'snapshot' &&
        !opts.allowShrink &&
        stored >= SHRINK_GUARD_MIN &&
        report.updatesWithdrawn > stored * MAX_SNAPSHOT_SHRINK;
      if (refused || opts.dryRun) return ABORT; // rolled back
      feed.finish(Date.now(), this.feedKeepMs);
      if (report.worksTouched > 0) bumpUpdatesGen(dbs);
      return report;
    });
    if (!refused) return opts.dryRun ? report : (result as ReplaceReport);
    if (!opts.dryRun) await this.abort();
    return this.shrinkFault(report);
  }

  private shrinkFault(report: ReplaceReport): Fault {
    return fault(
      'SNAPSHOT_SHRINK',
      `refused: this ${this.origin} file would withdraw ${report.updatesWithdrawn} of the feed's ${storedBefore(report)} stored updates ` +
        `(more than ${MAX_SNAPSHOT_SHRINK * 100}%); nothing was changed. If the file is right, import it with --allow-shrink`,
    );
  }

  /** Drops this import's scratch rows (the source failed part-way: nothing of it is applied). */
  async abort(): Promise<void> {
    this.batch = [];
    await this.inFlight.catch(() => {});
    await writeTransaction(this.dbs, () => this.removeOwnRows());
  }

  /** Inside a write transaction: this import's scratch rows go; when they are all there is, in one step. */
  private removeOwnRows(): void {
    const scratch = this.dbs.importScratch;
    const first = [...scratch.getKeys({ limit: 1 })][0] as Uint8Array | undefined;
    const last = [...scratch.getKeys({ limit: 1, reverse: true })][0] as Uint8Array | undefined;
    if (!first || !last) return;
    if (Buffer.compare(first, this.range.start) >= 0 && Buffer.compare(last, this.range.end) < 0) scratch.clearSync();
    else for (const key of [...scratch.getKeys({ ...this.range })]) scratch.removeSync(key);
  }

  private removeStale(now: number): void {
    const stale: Uint8Array[] = [];
    const own = Buffer.from(this.prefix);
    for (const key of this.dbs.importScratch.getKeys()) {
      // a resumed import (a harvest window) may be older than that: its own rows are what it resumes from
      if (own.equals((key as Uint8Array).subarray(0, own.length))) continue;
      const started = parseInt(decoder.decode((key as Uint8Array).subarray(0, 10)), 36);
      if (!(now - started < STALE_AFTER_MS)) stale.push(key as Uint8Array);
      if (stale.length > 100_000) break;
    }
    // a failure leaves them for the next import to remove
    if (stale.length > 0)
      writeTransaction(this.dbs, () => {
        for (const key of stale) this.dbs.importScratch.removeSync(key);
      }).catch(() => undefined);
  }
}

/** id 0x00 doiKey 0x00 u32 row (big-endian, so rows of a work sort in reading order) */
function scratchKey(prefix: Uint8Array, doiKey: string, row: number): Uint8Array {
  const doi = encoder.encode(doiKey);
  const key = new Uint8Array(prefix.length + doi.length + 5);
  key.set(prefix, 0);
  key.set(doi, prefix.length);
  const at = prefix.length + doi.length;
  key[at] = 0;
  new DataView(key.buffer).setUint32(at + 1, row);
  return key;
}

/** how many of the feed's updates were stored before this import */
function storedBefore(r: ReplaceReport): number {
  return r.updatesUnchanged + r.updatesChanged + r.updatesWithdrawn;
}
