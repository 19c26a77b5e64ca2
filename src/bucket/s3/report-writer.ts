import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Logger } from '../../base/index.ts';
import type { S3BucketSettings } from '../../config/index.ts';
import { describeS3Error } from './client.ts';

/** Under the bucket's prefix: where reports go, and what the mirror leaves out (listing.ts). */
export const REPORTS_FOLDER = 'reports/';
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5 * 60_000;

/**
 * Writes each file's report back into its S3 bucket as `reports/<platform>/<name>.json` (`[buckets.*] reports`;
 * the name whole, `.jsonl.gz` and all),
 * where the publisher already looks. Ingestion hands a report over and goes on: the writes run one at a time behind
 * it, a failed one is logged (`s3.report_write_failed`) and tried again with backoff (1 s doubling to 5 minutes),
 * holding back the reports after it, as the bucket's outage would fail them too. A file's later report replaces
 * a waiting one. What waits at close is not written (the ledger keeps every report; the next one of the same file
 * writes it whole).
 */
export class ReportWriter {
  /** reports waiting, by file key, in the order first handed over */
  private readonly waiting = new Map<string, string>();
  private running: Promise<void> | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly client: S3Client,
    private readonly settings: S3BucketSettings,
    private readonly log: Logger,
    private readonly retry = { firstMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS },
  ) {}

  /**
   * The object key of a file's report: `<prefix>reports/<platform>/<name>.json`, the name whole (`x.jsonl.gz.json`),
   * so two files never share a report (a quarantined `acme/x` beside `acme/x.jsonl.gz`).
   */
  objectKey(fileKey: string): string {
    return `${this.settings.prefix}${REPORTS_FOLDER}${fileKey}.json`;
  }

  /** Hands a report over: never waits, never throws. */
  write(fileKey: string, report: string): void {
    if (this.closed) return;
    this.waiting.delete(fileKey); // the later report, at the end of the line
    this.waiting.set(fileKey, report);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once nothing waits (tests, and a close that wants the queue drained). */
  idle(): Promise<void> {
    return this.waiting.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.running;
    if (this.waiting.size > 0)
      this.log.log('warn', 's3.reports_not_written', { bucket: this.settings.bucket, count: this.waiting.size });
  }

  private async run(): Promise<void> {
    let delay = this.retry.firstMs;
    while (!this.closed) {
      const next = this.waiting.entries().next();
      if (next.done) break;
      const [fileKey, body] = next.value;
      const Key = this.objectKey(fileKey);
      try {
        await this.client.send(
          new PutObjectCommand({ Bucket: this.settings.bucket, Key, Body: body, ContentType: 'application/json' }),
        );
        // a newer report that came during the write stays to be written
        if (this.waiting.get(fileKey) === body) this.waiting.delete(fileKey);
        delay = this.retry.firstMs;
      } catch (e) {
        const f = describeS3Error(e, this.settings);
        this.log.log('warn', 's3.report_write_failed', {
          key: Key,
          code: f.code,
          message: f.message,
          retryInMs: delay,
        });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
        delay = Math.min(delay * 2, this.retry.maxMs);
      }
    }
    if (this.waiting.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
