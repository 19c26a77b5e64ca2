import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { FaultError, type Logger } from '../../base/index.ts';
import type { S3BucketSettings } from '../../config/index.ts';
import { describeS3Error } from './client.ts';

/** Under the bucket's prefix: where reports go, and what the mirror leaves out (listing.ts). */
export const REPORTS_FOLDER = 'reports/';
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5 * 60_000;

/**
 * Where the reports come from: the store, which marks a file's report due in the transaction that decides the
 * file (`reportsDue`), so what is due outlives a stop, a crash or a bucket down for days, and nothing is held in
 * memory but the one report being sent.
 */
export interface ReportSource {
  /** the first file whose report is due, if any */
  nextReportDue(): string | undefined;
  reportsDueCount(): number;
  /** the file's report as written (JSON text), read now; undefined when the ledger does not hold it */
  reportText(key: string): string | undefined;
  /** `sent` is in the bucket: no longer due, unless the report changed meanwhile */
  reportWritten(key: string, sent: string): Promise<void>;
}

/**
 * Writes each file's report back into its S3 bucket as `reports/<platform>/<name>.json` (`[buckets.*] reports`;
 * the name whole, `.jsonl.gz` and all), where the publisher already looks. Ingestion decides a file and goes on
 * (`nudge`): the writes run one at a time behind it, each report read from the store as it is sent, so a file
 * decided twice while waiting is written once, as it is now. A failed write is logged (`s3.report_write_failed`)
 * and tried again with backoff (1 s doubling to 5 minutes), holding back the reports after it, as the bucket's
 * outage would fail them too. What is still due at close stays due in the store, and is written after the
 * next start.
 */
export class ReportWriter {
  private running: Promise<void> | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly client: S3Client,
    private readonly settings: S3BucketSettings,
    private readonly source: ReportSource,
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

  /** Reports may be due (a file was decided, or the writer starts): writes them. Never waits, never throws. */
  nudge(): void {
    if (this.closed) return;
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once no report is due (tests). */
  idle(): Promise<void> {
    if (this.source.nextReportDue() === undefined) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.nudge();
    return done;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.running;
    const count = this.source.reportsDueCount();
    if (count > 0) this.log.log('warn', 's3.reports_not_written', { bucket: this.settings.bucket, count });
  }

  private async run(): Promise<void> {
    let delay = this.retry.firstMs;
    while (!this.closed) {
      const fileKey = this.source.nextReportDue();
      if (fileKey === undefined) break;
      const Key = this.objectKey(fileKey);
      try {
        const body = this.source.reportText(fileKey);
        if (body !== undefined)
          await this.client.send(
            new PutObjectCommand({ Bucket: this.settings.bucket, Key, Body: body, ContentType: 'application/json' }),
          );
        await this.source.reportWritten(fileKey, body ?? '');
        delay = this.retry.firstMs;
      } catch (e) {
        // the store's own fault (marking it written failed: it is written again) as it is, else the bucket's
        const f = e instanceof FaultError ? e.fault : describeS3Error(e, this.settings);
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
    if (this.source.nextReportDue() === undefined) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
