import { ENV_NAMES, type Config } from '../config/index.ts';
import type { Logger } from '../log.ts';
import { EnvironmentRunner } from './environment-runner.ts';
import { FollowedSources } from '../updates/index.ts';
import { Entitlements } from '../entitlement/index.ts';
import { createApp, startServer, type EnvHandles } from '../http/index.ts';

/** Ingestion is "stuck" when files wait and nothing finished for this long. */
const STUCK_AFTER_MS = 10 * 60_000;

/** Builds the long-lived parts from the config, starts them, and closes them in reverse order. */
export class Daemon {
  readonly envs = new Map<string, EnvironmentRunner>();
  private readonly closers: (() => Promise<void>)[] = [];
  private closing: Promise<void> | undefined;
  url: string | undefined;
  updateSources: FollowedSources | undefined;

  constructor(
    readonly config: Config,
    readonly log: Logger,
    readonly version: string,
  ) {}

  async start(): Promise<void> {
    for (const env of ENV_NAMES) {
      const bucket = this.config.buckets[env];
      if (!bucket) continue;
      const runner = new EnvironmentRunner(env, bucket, this.config, this.log);
      this.envs.set(env, runner);
      this.closers.push(() => runner.close());
    }
    // the entitlement index is read from each store before its ingest starts (it then follows every file applied)
    // and before the port opens (the first request must not wait for it)
    const entitlements = new Entitlements(this.config.platforms, this.config.entitlements);
    this.closers.push(async () => entitlements.close());
    for (const [env, r] of this.envs) {
      const index = entitlements.forStore(r.store).index;
      index.build();
      this.log.log('info', 'entitlement.index_built', { env, dois: index.size, ms: Math.round(index.lastBuildMs), bytes: index.memoryBytes });
    }
    for (const r of this.envs.values()) await r.start();
    const sources = new FollowedSources({
      dropDir: this.config.updates.dropDir,
      urls: this.config.updates.urls,
      stores: [...this.envs.values()].map((r) => r.store),
      log: this.log,
    });
    this.updateSources = sources;
    this.closers.push(() => sources.close());
    await sources.start();

    const handles = (env: string): EnvHandles | undefined => {
      const r = this.envs.get(env);
      return r && { store: r.store, ingest: r.ingestor.stats };
    };
    const app = createApp({
      entitlements,
      integrators: this.config.integrators,
      maxBodyBytes: this.config.server.maxBodyBytes,
      envs: { production: handles('production')!, staging: handles('staging') },
      health: () => this.health(),
      version: this.version,
    });
    const server = startServer(app, this.config.server.host, this.config.server.port);
    this.url = server.url;
    this.closers.push(() => server.stop());
    this.log.log('info', 'daemon.started', { version: this.version, envs: [...this.envs.keys()], url: server.url });
  }

  /** 200 on /healthz when every store is open and no ingestor has files waiting without progress. */
  health(): { ok: boolean; checks: Record<string, unknown> } {
    const checks: Record<string, unknown> = {};
    let ok = !this.closing;
    const now = Date.now();
    for (const [env, r] of this.envs) {
      const s = r.ingestor.stats;
      const stuck = s.queueDepth > 0 && s.lastProgressAt > 0 && now - s.lastProgressAt > STUCK_AFTER_MS;
      if (stuck) ok = false;
      checks[env] = { queueDepth: s.queueDepth, filesApplied: s.filesApplied, quarantined: s.quarantined, stuck };
    }
    return { ok, checks };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const close of this.closers.reverse()) {
        try {
          await close();
        } catch (e) {
          this.log.log('error', 'daemon.close_failed', { error: String(e) });
        }
      }
      this.log.log('info', 'daemon.stopped', {});
    })();
    return this.closing;
  }
}
