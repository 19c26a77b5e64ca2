import { mkdirSync, realpathSync } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import { isHiddenOrTemp } from '../deposit/index.ts';
import type { Logger } from '../log.ts';
import { scanBucketFolder, toKey } from './local-scan.ts';

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
}

/**
 * Watches a bucket folder (a local bucket, or an S3 mirror) with chokidar. On start every file already there is
 * handed on in one call (the ingestor sorts them by LastModified, key); later arrivals as they finish writing.
 */
export class FolderWatch {
  private watcher: FSWatcher | undefined;
  private closed = false;

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
      void Promise.resolve(onFiles([toKey(real, path)])).catch((e) => log.log('error', 'watch.handler_failed', { env: envName, error: String(e) }));
    };
    watcher.on('add', handle).on('change', handle);
    watcher.on('error', (e) => log.log('error', 'watch.error', { env: envName, root, error: String(e) }));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    const existing = await scanBucketFolder(root, { everyEntry: true });
    log.log('info', 'watch.started', { env: envName, root, existingFiles: existing.length });
    await onFiles(existing);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.watcher?.close();
  }
}
