import type { Logger } from '../base/index.ts';
import { FolderWatch, ReportWriter, S3Mirror, s3ClientFor } from '../bucket/index.ts';
import type { BucketSettings, Config, EnvName } from '../config/index.ts';
import { Ingestor } from '../ingest/index.ts';
import { Store } from '../store/index.ts';

/** One deployment environment inside the daemon: its store, its bucket folder watch and its ingestor. */
export class EnvironmentRunner {
  readonly store: Store;
  readonly ingestor: Ingestor;
  private readonly watch: FolderWatch;
  readonly mirror: S3Mirror | undefined;
  /** `[buckets.*] reports`: each decided file's report written back into the bucket, behind ingestion */
  readonly reports: ReportWriter | undefined;

  constructor(
    readonly env: EnvName,
    readonly bucket: BucketSettings,
    config: Config,
    /** the platforms deposits are accepted for, read per file (a reload changes the set in place) */
    platforms: ReadonlySet<string>,
    log: Logger,
  ) {
    this.store = Store.open(config.store.dir, env, { ...config.store, log });
    const reports =
      bucket.kind === 's3' && bucket.reports
        ? new ReportWriter(s3ClientFor(bucket), bucket, this.store, log)
        : undefined;
    this.reports = reports;
    this.ingestor = new Ingestor({
      env,
      store: this.store,
      root: bucket.path,
      platforms,
      settings: config.ingest,
      log,
      // a decided file's report is due in the store (reportsDue): the writer is woken, never awaited
      ...(reports && { onOutcome: () => reports.nudge() }),
    });
    this.watch = new FolderWatch({
      root: bucket.path,
      settleMs: config.ingest.settleMs,
      live: bucket.kind === 'local',
      log,
      envName: env,
      onFiles: (keys) => this.ingestor.submit(keys),
      holds: (key, stat) => this.ingestor.holds(key, stat),
      rescanMs: config.ingest.rescanSeconds * 1000,
    });

    if (bucket.kind === 's3')
      this.mirror = new S3Mirror({
        settings: bucket,
        log,
        envName: env,
        maxDecompressedBytes: config.ingest.maxDecompressedBytes,
        onChange: (keys) => this.ingestor.submit(keys),
      });
  }

  async start(): Promise<void> {
    // reports due from before (a stop, a crash, the bucket down) are written now; without reports none are kept
    if (this.reports) this.reports.nudge();
    else await this.store.clearReportsDue();
    await this.watch.start();
    this.mirror?.start();
  }

  async close(): Promise<void> {
    await this.mirror?.close();
    await this.watch.close();
    await this.ingestor.close();
    await this.reports?.close();
    await this.store.close();
  }
}
