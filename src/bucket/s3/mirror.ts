import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Fault, Logger } from '../../base/index.ts';
import type { S3BucketSettings } from '../../config/index.ts';
import { applyOrder, rawSizeFault } from '../../deposit/index.ts';
import { describeS3Error, s3ClientFor } from './client.ts';
import { downloadObject } from './download.ts';
import { LateObjects } from './late-objects.ts';
import { listBucket, type MirrorObject } from './listing.ts';
import { placeMirrored } from './mirror-place.ts';
import { loadMirrorState, type MirroredObject, saveMirrorState } from './mirror-state.ts';
import { SkippedKeys } from './skipped-keys.ts';

/**
 * Mirrors an S3 bucket (under its prefix) into a local folder that is then ingested like a local bucket.
 *
 * We list with ListObjectsV2 to keep each ETag, download into a hidden `.s3-partial/` folder the watcher ignores
 * (s3-download.ts: GetObject with If-Match, so the bytes are those listed; the mtime is the listed LastModified)
 * and rename into place. Objects deleted from the bucket are never deleted here; a key re-uploaded with other
 * content keeps its old copy under `.superseded/` (raw deposits are never lost) and the new one is handed on,
 * where the ledger quarantines it as a same-key conflict. Beside it: keys it does not copy (s3-skipped-keys.ts)
 * and objects that come late (s3-late-objects.ts).
 */

const PARTIAL = '.s3-partial';
/**
 * The state (every object's ETag) is written whole: after each file put in place it cost a cold catch-up of
 * 100,000 objects 58 ms a file. So it is written at most this often during a round, and at its end; a crash in
 * between downloads those files again at the next start, which the ledger takes as the same files.
 */
const STATE_SAVE_EVERY_MS = 1000;
const CONCURRENCY = 8;
const MAX_BACKOFF_MS = 5 * 60_000;
/**
 * S3 gives LastModified to the second. An object is taken only once its LastModified second had ended, and
 * LISTING_LAG_MS more, before the listing began: then every object of that second is in the same listing, and
 * files reach the ingestor in (LastModified, key) order whether a replica sees them one by one or all at once
 * (docs/design.md, "Apply order and replica convergence"). The lag: an object is listed a moment after the time
 * it is stamped with (a few ms on the S3 test server, once more on a loaded machine; two replicas then applied a
 * second's files in different orders). A whole second more cost the S3 benchmark its latency line.
 */
const LISTING_LAG_MS = 250;
/** how long after an object's LastModified (its second's start) a listing takes it */
export const SAME_SECOND_GUARD_MS = 1000 + LISTING_LAG_MS;

export interface SyncResult {
  listed: number;
  downloaded: string[];
  skippedKeys: string[];
}

export interface S3MirrorOptions {
  settings: S3BucketSettings;
  log: Logger;
  envName: string;
  /** keys downloaded by one complete sync round, handed on together so they can be applied in order */
  onChange?: (keys: string[]) => void | Promise<void>;
  client?: S3Client;
  /** a download with no byte for this long fails (s3-download.ts; tests shorten it) */
  stallMs?: number;
  /** the ingest's bound on a file's content: an object larger than any gzip of that much can be is not downloaded */
  maxDecompressedBytes: number;
}

export class S3Mirror {
  private readonly client: S3Client;
  private readonly state: Map<string, MirroredObject>;
  private readonly skips: SkippedKeys;
  private readonly late: LateObjects;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<unknown> | undefined;
  private failures = 0;
  /** rounds failed in a row (metrics; the alert on rounds that keep failing while listings succeed) */
  get failedRounds(): number {
    return this.failures;
  }
  private stateUnsaved = false;
  private stateSavedAt = 0;
  private readonly stopping = new AbortController();
  private closed = false;
  lastError: Fault | undefined;
  lastSuccessAt = 0;
  /** when a listing of the bucket last succeeded (ms; 0: never): /metrics, alerts on a listing that keeps failing */
  lastListingAt = 0;

  constructor(private readonly opts: S3MirrorOptions) {
    this.client = opts.client ?? s3ClientFor(opts.settings);
    this.late = new LateObjects(opts.log, opts.envName);
    this.skips = new SkippedKeys(opts.log, { env: opts.envName, bucket: opts.settings.bucket });
    mkdirSync(opts.settings.path, { recursive: true });
    rmSync(join(opts.settings.path, PARTIAL), { recursive: true, force: true }); // leftovers of a crash
    this.state = loadMirrorState(opts.settings.path);
    for (const [rel, o] of this.state) this.late.noteInPlace({ key: rel, lastModified: o.lastModified });
  }

  /** keys not mirrored, by code (/metrics) */
  get skipped(): ReadonlyMap<string, number> {
    return this.skips.counts;
  }

  /** Syncs now, then every pollMs; failures back off exponentially and never stop the loop. */
  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.closed) return;
    this.inFlight = this.syncOnce()
      .then(() => {
        this.failures = 0;
      })
      .catch(() => {
        this.failures++;
      })
      .finally(() => {
        this.inFlight = undefined;
        if (this.closed) return;
        const { pollMs } = this.opts.settings;
        const delay =
          this.failures === 0 ? pollMs : Math.min(MAX_BACKOFF_MS, Math.max(pollMs, 1000 * 2 ** (this.failures - 1)));
        this.timer = setTimeout(() => this.tick(), delay);
      });
  }

  /**
   * One complete round: list, download what is new or changed, hand the new keys on. Files are downloaded in
   * apply order, (LastModified, key), several at a time, and handed on as soon as every file before them in
   * that order is in place: ingestion starts while the rest download, and a file is never handed on ahead of an
   * earlier one that failed (replicas must apply in the same order). Throws on failure.
   */
  async syncOnce(): Promise<SyncResult> {
    const { settings, log, envName, onChange } = this.opts;
    let objects: MirrorObject[];
    const listStart = Date.now();
    try {
      objects = await listBucket(this.client, settings, (key, why) => this.skips.say(key, why), this.stopping.signal);
      this.lastListingAt = Date.now();
    } catch (e) {
      this.fail(e);
      throw e;
    }
    try {
      if (this.stateUnsaved) this.saveState(); // an earlier round's write failed: rounds fail until it succeeds
    } catch (e) {
      this.fail(e);
      throw e;
    }
    const todo = objects
      .filter((o) => {
        if (o.lastModified > listStart - SAME_SECOND_GUARD_MS) return false; // next round
        if (this.skips.isAside(o)) return false; // its bytes clashed or were too large already
        const known = this.state.get(o.rel);
        if (known && known.etag === o.etag && known.size === o.size) return false;
        return !this.refusedForSize(o);
      })
      .sort(applyOrder); // by the bucket key: one prefix, so the same order as by `rel`
    this.late.sayLate(todo);
    // downloaded files wait in the hidden partial folder until every earlier one is in place
    const partial: (string | 'failed' | undefined)[] = todo.map(() => undefined);
    const downloaded: string[] = [];
    let handed = 0;
    let handing: Promise<unknown> = Promise.resolve();
    let firstError: unknown;
    const handOn = () => {
      const keys: string[] = [];
      try {
        while (handed < todo.length && partial[handed] !== undefined && partial[handed] !== 'failed') {
          if (this.putInPlace(todo[handed]!, partial[handed]!)) keys.push(todo[handed]!.rel);
          handed++;
        }
      } finally {
        // what is in place is handed on, even when a later rename failed or the state cannot be written
        if (keys.length > 0) {
          downloaded.push(...keys);
          handing = handing.then(() => onChange?.(keys)).catch((e: unknown) => void (firstError ??= e));
          this.stateUnsaved = true;
          if (Date.now() - this.stateSavedAt >= STATE_SAVE_EVERY_MS) this.saveState();
        }
      }
    };
    let next = 0;
    const worker = async () => {
      while (next < todo.length && firstError === undefined && !this.closed) {
        const i = next++;
        try {
          partial[i] = await this.download(todo[i]!);
        } catch (e) {
          partial[i] = 'failed';
          firstError ??= e;
        }
        try {
          handOn();
        } catch (e) {
          // a rename into the mirror failed (disk full, permissions): stop here, retried next round
          firstError ??= e;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, todo.length) }, worker));
    } finally {
      // after a failure: what waits behind it is fetched again next round, in order
      for (let i = handed; i < todo.length; i++)
        if (partial[i] && partial[i] !== 'failed') rmSync(partial[i]!, { force: true });
    }
    try {
      if (this.stateUnsaved) this.saveState();
    } catch (e) {
      firstError ??= e;
    }
    await handing;
    if (downloaded.length > 0)
      log.log('info', 's3.synced', {
        env: envName,
        bucket: settings.bucket,
        listed: objects.length,
        downloaded: downloaded.length,
      });
    if (firstError) {
      this.fail(firstError);
      throw firstError;
    }
    if (this.lastError) log.log('info', 's3.recovered', { env: envName, bucket: settings.bucket });
    this.lastError = undefined;
    this.lastSuccessAt = Date.now();
    return { listed: objects.length, downloaded, skippedKeys: this.skips.keys() };
  }

  /** Downloads one object into the hidden partial folder (GetObject with If-Match: the listed bytes); returns the path. */
  private async download(o: MirrorObject): Promise<string> {
    const { settings } = this.opts;
    const partialDir = join(settings.path, PARTIAL);
    const tmpName = `${crypto.randomUUID()}.partial`;
    mkdirSync(partialDir, { recursive: true });
    const tmp = join(partialDir, tmpName);
    try {
      await downloadObject(this.client, { ...o, bucket: settings.bucket }, tmp, {
        stallMs: this.opts.stallMs,
        stop: this.stopping.signal,
      });
      return tmp;
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  /**
   * An object larger than any deposit can be (TOO_LARGE) is not downloaded: any bucket writer could otherwise fill
   * the state disk, which holds the store too. Said, and put aside until its bytes change (then said again).
   */
  private refusedForSize(o: MirrorObject): boolean {
    const tooLarge = rawSizeFault(o.key, o.size, this.opts.maxDecompressedBytes);
    if (tooLarge) this.skips.setAside(o, `${tooLarge.message}; not mirrored`, 'TOO_LARGE', true);
    return tooLarge !== undefined;
  }

  /** Puts a downloaded object in the mirror and records it; false (said, skipped) when its key clashes with another. */
  private putInPlace(o: MirrorObject, tmp: string): boolean {
    const clash = placeMirrored(this.opts.settings.path, o.rel, tmp, this.state.get(o.rel)?.etag);
    if (clash) {
      this.skips.setAside(o, clash, 'PATH_CLASH');
      return false;
    }
    this.skips.release(o.rel);
    this.state.set(o.rel, { etag: o.etag, size: o.size, lastModified: o.lastModified });
    this.late.noteInPlace({ key: o.rel, lastModified: o.lastModified });
    return true;
  }

  /** Writes the mirror state; a failure (full disk) fails the round and is tried again each round (a restart meanwhile re-downloads: same files to the ledger). */
  private saveState(): void {
    try {
      saveMirrorState(this.opts.settings.path, this.state);
      this.stateUnsaved = false;
      this.stateSavedAt = Date.now();
    } catch (e) {
      this.stateUnsaved = true;
      throw Object.assign(
        new Error(`cannot write the mirror state in ${this.opts.settings.path}: ${(e as Error).message}`),
        { code: (e as NodeJS.ErrnoException).code, syscall: (e as NodeJS.ErrnoException).syscall },
      );
    }
  }

  private fail(e: unknown): void {
    if (this.closed) return; // a round cut short by a stop is no failure of the bucket's
    const { settings, log, envName } = this.opts;
    this.lastError = describeS3Error(e, settings);
    log.log('error', 's3.sync_failed', {
      env: envName,
      bucket: settings.bucket,
      ...this.lastError,
      failures: this.failures + 1,
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort(new Error('the mirror is closing')); // downloads under way end; the next start takes them again
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
    this.client.destroy();
  }
}
