import { mkdirSync, realpathSync } from 'node:fs';
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from '../base/index.ts';
import { isHiddenOrTemp } from '../deposit/index.ts';
import { scanBucketFolder, toKey } from './local-scan.ts';
import { type HoldsFile, missedFiles } from './rescan.ts';

/**
 * How long after a new folder is seen its files are listed: chokidar can miss a file written into a folder in
 * the instant it takes the folder up (about 4 in 10 when two files are written 1 ms apart into a new folder).
 */
const NEW_FOLDER_SCAN_DELAY_MS = 250;

export interface FolderWatchOptions {
  root: string;
  /** write-finish detection: a file's size must be stable this long before it is handed on */
  settleMs: number;
  log: Logger;
  envName: string;
  /** receives bucket keys; the ingestor orders, dedups and applies them */
  onFiles: (keys: string[]) => void | Promise<void>;
  /**
   * false: only the start-up scan. An S3 mirror hands on each sync round's files itself, all at once, so that
   * they are ordered together; file events one by one could reach the ingestor out of order.
   */
  live?: boolean;
  /** whether the ingestor has this version of a file already: a rescan hands on only the files it has not */
  holds: HoldsFile;
  /** a live watch lists the whole folder this often for files it missed; 0: never (only new folders are listed) */
  rescanMs: number;
}

/**
 * Watches a bucket folder (a local bucket, or an S3 mirror) with chokidar. On start every file already there is
 * handed on in one call (the ingestor sorts them by LastModified, key); later arrivals as they finish writing.
 * A live watch also lists each new folder shortly after it appears, and the whole folder every rescanMs, and hands
 * on the settled files the ingestor does not hold: a file the watch missed waits that long, not for a restart.
 */
export class FolderWatch {
  private watcher: FSWatcher | undefined;
  private closed = false;
  /** each new folder's listing, due NEW_FOLDER_SCAN_DELAY_MS after that folder appeared */
  private readonly folderTimers = new Set<ReturnType<typeof setTimeout>>();
  private rescanTimer: ReturnType<typeof setInterval> | undefined;
  private rescanning = false;
  /** listings under way: close waits for them, so none asks the ingestor after it is closed */
  private readonly listings = new Set<Promise<string[]>>();

  constructor(private readonly opts: FolderWatchOptions) {}

  async start(): Promise<void> {
    const { root, settleMs, log, envName, onFiles, live = true } = this.opts;
    mkdirSync(root, { recursive: true });
    if (!live) {
      const existing = await scanBucketFolder(root, { everyEntry: true });
      log.log('info', 'watch.started', { env: envName, root, existingFiles: existing.length, live });
      await onFiles(existing);
      return;
    }
    // The watcher starts first, so a file landing during the initial scan is seen by one or the other (or both:
    // the ingestor ignores a key it already holds). It watches the real folder: links inside are not followed,
    // but a bucket folder that is itself a link must still be watched.
    const real = realpathSync(root);
    const watcher = watch(real, {
      ignoreInitial: true,
      ignored: (path: string) => path !== real && isHiddenOrTemp(toKey(real, path)),
      awaitWriteFinish: settleMs > 0 ? { stabilityThreshold: settleMs, pollInterval: Math.min(50, settleMs) } : false,
      alwaysStat: false,
      // a link is handed on as itself, and refused (NOT_REGULAR_FILE): it may point outside the bucket
      followSymlinks: false,
    });
    this.watcher = watcher;
    const handle = (path: string) => {
      if (this.closed) return;
      const key = toKey(real, path);
      void Promise.resolve(onFiles([key])).catch((e) =>
        log.log('error', 'watch.handler_failed', { env: envName, key, error: String(e) }),
      );
    };
    watcher.on('add', handle).on('change', handle);
    watcher.on('addDir', (path: string) => path !== real && this.noteNewFolder(toKey(real, path)));
    watcher.on('error', (e) => log.log('error', 'watch.error', { env: envName, root, error: String(e) }));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    const existing = await scanBucketFolder(root, { everyEntry: true });
    log.log('info', 'watch.started', {
      env: envName,
      root,
      existingFiles: existing.length,
      rescanMs: this.opts.rescanMs,
    });
    await onFiles(existing);
    if (this.opts.rescanMs > 0 && !this.closed)
      this.rescanTimer = setInterval(() => void this.rescan(), this.opts.rescanMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.folderTimers) clearTimeout(t);
    clearInterval(this.rescanTimer);
    await this.watcher?.close();
    await Promise.all(this.listings);
  }

  /** Lists the whole folder for files the watch missed; a rescan still running is not doubled. */
  async rescan(): Promise<string[]> {
    if (this.rescanning || this.closed) return [];
    this.rescanning = true;
    try {
      return await this.handOnMissed(undefined);
    } finally {
      this.rescanning = false;
    }
  }

  private noteNewFolder(key: string): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.folderTimers.delete(timer);
      void this.handOnMissed(key);
    }, NEW_FOLDER_SCAN_DELAY_MS);
    this.folderTimers.add(timer);
  }

  /** Hands on the settled files below `under` (the whole folder: undefined) that the ingestor does not hold. */
  private handOnMissed(under: string | undefined): Promise<string[]> {
    const listing = this.list(under).finally(() => this.listings.delete(listing));
    this.listings.add(listing);
    return listing;
  }

  private async list(under: string | undefined): Promise<string[]> {
    const { root, settleMs, holds, log, envName, onFiles } = this.opts;
    try {
      const unreadable: string[] = [];
      const stopped = () => this.closed;
      const keys = await missedFiles(root, {
        under,
        settleMs,
        holds,
        stopped,
        unreadable: (key, e) => unreadable.push(`${key}: ${String(e)}`),
      });
      if (unreadable.length > 0)
        log.log('warn', 'watch.rescan_skipped', {
          env: envName,
          folder: under ?? '',
          files: unreadable.length,
          first: unreadable.slice(0, 5),
        });
      if (keys.length === 0 || this.closed) return [];
      // info, not warn: a file that settled during the listing may be the watch's own too (the ingestor dedups)
      log.log('info', 'watch.rescan_found', {
        env: envName,
        folder: under ?? '',
        files: keys.length,
        keys: keys.slice(0, 10),
      });
      await onFiles(keys);
      return keys;
    } catch (e) {
      log.log('error', 'watch.rescan_failed', { env: envName, root, folder: under ?? '', error: String(e) });
      return [];
    }
  }
}
