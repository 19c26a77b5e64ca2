import type { Logger } from '../base/index.ts';
import { FolderWatch, S3Mirror } from '../bucket/index.ts';
import type { BucketSettings, Config, EnvName } from '../config/index.ts';
import { Ingestor } from '../ingest/index.ts';
import { Store } from '../store/index.ts';

/** One deployment environment inside the daemon: its store, its bucket folder watch and its ingestor. */
export class EnvironmentRunner {
  readonly store: Store;
  readonly ingestor: Ingestor;
  private readonly watch: FolderWatch;
  readonly mirror: S3Mirror | undefined;

  constructor(
    readonly env: EnvName,
    readonly bucket: BucketSettings,
    config: Config,
    /** the platforms deposits are accepted for, read per file (a reload changes the set in place) */
    platforms: ReadonlySet<string>,
    log: Logger,
  ) {
    this.store = Store.open(config.store.dir, env, config.store);
    this.ingestor = new Ingestor({
      env,
      store: this.store,
      root: bucket.path,
      platforms,
      settings: config.ingest,
      log,
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
    await this.watch.start();
    this.mirror?.start();
  }

  async close(): Promise<void> {
    await this.mirror?.close();
    await this.watch.close();
    await this.ingestor.close();
    await this.store.close();
  }
}
