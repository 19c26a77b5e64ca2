import type { Logger } from '../base/index.ts';
import { FaultError, jobWorkersEnded, libc, settlesWithin, UNKNOWN_COMMIT } from '../base/index.ts';
import { BUILT_IN_SOURCE, type Config, ENV_NAMES } from '../config/index.ts';
import { OperatorConsole, shellWord } from '../console/index.ts';
import { Entitlements, workerBuilder } from '../entitlement/index.ts';
import { ApiKeys, createApp, createConsoleApp, type EnvHandles, ReportKeys, startServer } from '../http/index.ts';
import type { WarmRead } from '../store/index.ts';
import { FollowedSources } from '../updates/index.ts';
import { Webhooks } from '../webhooks/index.ts';
import { configChanges } from './config-changes.ts';
import { daemonRegistry } from './daemon-metrics.ts';
import { EnvironmentRunner } from './environment-runner.ts';

/** Ingestion is "stuck" when files wait and nothing finished for this long. */
const STUCK_AFTER_MS = 10 * 60_000;
/** How long a stop waits for a start or reload under way before it closes anyway. */
const RELOADS_END_MS = 10_000;
/**
 * How long a stop waits for the store reads on worker threads (an index build takes seconds) before it says so;
 * with RELOADS_END_MS (the drain runs beside it) and a harvest page's 5 s (crossref-client.ts), under systemd's stop
 * time-out (45 s in conf/doi-holdings.service), which then ends the process.
 */
const WORKERS_END_MS = 15_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Builds the long-lived parts from the config, starts them, and closes them in reverse order. */
export class Daemon {
  readonly envs = new Map<string, EnvironmentRunner>();
  private readonly closers: (() => Promise<void>)[] = [];
  private closing: Promise<void> | undefined;
  private readonly startedAt = Date.now();
  url: string | undefined;
  /** the operator console's own listener (`server.adminListen`), once it listens */
  adminUrl: string | undefined;
  /** the buckets are watched and the update sources started (the port opens before) */
  private started = false;
  updateSources: FollowedSources | undefined;
  /** the platforms deposits are accepted for; a reload changes it in place (the ingestors read it per file) */
  private readonly platformNames: Set<string>;
  private readonly keys: ApiKeys;
  /** the platforms' deposit-report keys, replaced on reload as the integrators' are */
  private readonly reportKeys: ReportKeys;
  private readonly entitlements: Entitlements;
  /** reloads run one after another, and only once start() has finished */
  private reloads: Promise<unknown> = Promise.resolve();
  /** push alerts, on the replica with `[webhooks] enabled` (docs/operations.md, "Push alerts") */
  webhooks: Webhooks | undefined;
  /** /readyz was asked since the start: something (a load balancer) watches it, so a stop drains first */
  private readinessAsked = false;

  constructor(
    /** the running config: a reload replaces the parts it can change live */
    public config: Config,
    readonly log: Logger,
    readonly version: string,
    /** the git commit the program was built from (buildCommit) */
    readonly commit: string = UNKNOWN_COMMIT,
  ) {
    this.platformNames = new Set(config.platforms.map((p) => p.name));
    this.keys = new ApiKeys(config.integrators);
    this.reportKeys = new ReportKeys(config.platforms);
    this.entitlements = new Entitlements(config.platforms, config.entitlements);
  }

  start(): Promise<void> {
    const started = this.startParts();
    this.reloads = started.catch(() => undefined);
    return started;
  }

  private async startParts(): Promise<void> {
    for (const env of ENV_NAMES) {
      const bucket = this.config.buckets[env];
      if (!bucket) continue;
      const runner = new EnvironmentRunner(env, bucket, this.config, this.platformNames, this.log);
      this.envs.set(env, runner);
      this.closers.push(() => runner.close());
    }
    // each store's entitlement index is read on another core, from before its ingest starts (it then follows every
    // file applied); until it lands, entitlement lookups read the store, so the port opens without waiting for it
    const entitlements = this.entitlements;
    this.closers.push(async () => entitlements.close());
    const builder = workerBuilder();
    for (const [env, r] of this.envs) {
      entitlements.forStore(r.store).index.buildInBackground(builder, {
        built: (figures) =>
          this.log.log('info', 'entitlement.index_built', { env, ...figures, ms: Math.round(figures.ms) }),
        failed: (error) =>
          this.log.log('error', 'entitlement.index_build_failed', {
            env,
            error,
            message: 'built on the main thread instead',
          }),
      });
    }
    // the Updates API's index and the private lookup's too: a large store's first read would hold the first request
    for (const [env, r] of this.envs) {
      r.store.onIndexReadFailed = (index, error) =>
        this.log.log('error', 'store.index_read_failed', {
          env,
          index,
          error,
          message: 'read on the main thread instead',
        });
      const read = (index: string) => (w: WarmRead) =>
        'ms' in w && this.log.log('info', 'store.index_read', { env, index, ms: Math.round(w.ms) });
      void r.store.updatesIndex.warm().then(read('updates'));
      void r.store.changeFeed.warm().then(read('prefixes'));
    }
    this.openWebhooks();
    // the port opens before the buckets are scanned and the update sources started: at 100M holdings the scan of
    // a bucket's files against the ledger takes about a second, and answers are right without it
    if (this.closing) return;
    this.listen();
    for (const r of this.envs.values()) {
      if (this.closing) return; // a stop came during the start: what is not started yet is not started
      await r.start();
    }
    this.closers.push(async () => this.updateSources?.close());
    if (this.closing) return;
    this.webhooks?.start();
    await this.followUpdates(this.config);
    if (this.closing) return;
    this.started = true;
    // nativeMemory: libc's madvise and memcpy were found (src/base/libc.ts): huge pages and native reply copies
    this.log.log('info', 'daemon.started', {
      version: this.version,
      commit: this.commit,
      envs: [...this.envs.keys()],
      url: this.url,
      nativeMemory: libc() !== null,
    });
  }

  /**
   * The webhooks' store, when this replica delivers; it follows the production store's change feed. Closed before
   * the stores (closers run in reverse), after its deliveries in flight have ended.
   */
  private openWebhooks(): void {
    const settings = this.config.webhooks;
    const store = this.envs.get('production')?.store;
    if (!settings?.enabled || !store) return;
    const { nice, idle, ...options } = settings;
    // the feed is followed and the deliveries sent in a process of lower priority: the APIs' requests come first
    const delivery = { store: { ...store.opened, env: store.env }, nice, idle, log: this.log };
    const webhooks = new Webhooks(delivery, {
      ...options,
      onError: (e) => this.log.log('error', 'webhooks.failed', { error: String((e as Error)?.stack ?? e) }),
      onPaused: (s) =>
        this.log.log('warn', 'webhooks.paused', {
          subscription: s.id,
          integrator: s.integrator,
          reason: s.paused?.reason,
        }),
    });
    this.webhooks = webhooks;
    this.closers.push(() => webhooks.close());
  }

  private listen(): void {
    const handles = (env: string): EnvHandles | undefined => {
      const r = this.envs.get(env);
      return r && { store: r.store, ingest: r.ingestor.stats };
    };
    const { admin, adminKey } = this.config.server;
    const operatorConsole = admin || adminKey ? this.operatorConsole(handles) : undefined;
    const app = createApp({
      entitlements: this.entitlements,
      integrators: this.keys,
      reportKeys: this.reportKeys,
      maxBodyBytes: this.config.server.maxBodyBytes,
      bodyTimeoutMs: this.config.server.bodyTimeoutMs,
      envs: { production: handles('production')!, staging: handles('staging') },
      health: () => this.health(),
      ready: () => this.ready(),
      version: this.version,
      registry: daemonRegistry(this.envs, () => this.updateSources, { version: this.version, commit: this.commit }),
      log: this.log,
      statusPageRate: this.config.statusPage?.rateLimit,
      trustedProxies: this.config.server.trustedProxies,
      // on the public listener only with a key, and only when the operator has no listener of their own
      console: operatorConsole && !admin && adminKey ? { view: operatorConsole, key: adminKey } : undefined,
      subscriptions: { webhooks: this.webhooks, servedBy: this.config.webhooks?.servedBy },
    });
    const server = startServer(app, this.config.server.host, this.config.server.port, this.config.server.bodyTimeoutMs);
    this.url = server.url;
    this.closers.push(() => server.stop());
    this.log.log('info', 'daemon.listening', { url: server.url });
    if (admin && operatorConsole) {
      const adminServer = startServer(createConsoleApp(operatorConsole, adminKey), admin.host, admin.port);
      this.adminUrl = adminServer.url;
      this.closers.push(() => adminServer.stop());
      this.log.log('info', 'daemon.console_listening', {
        url: `${adminServer.url}/console`,
        key: adminKey !== undefined,
      });
    }
  }

  /** The operator console over the running parts (docs/operations.md, "Operator console"). */
  private operatorConsole(handles: (env: string) => EnvHandles | undefined): OperatorConsole {
    const source = this.config.source;
    return new OperatorConsole({
      version: this.version,
      envs: { production: handles('production'), staging: handles('staging') },
      entitlements: this.entitlements,
      updateSources: () => this.updateSources?.status,
      command: source === BUILT_IN_SOURCE ? 'doi-holdings' : `doi-holdings --config ${shellWord(source)}`,
    });
  }

  private async followUpdates(config: Config): Promise<void> {
    const sources = new FollowedSources({
      dropDir: config.updates.dropDir,
      nice: config.updates.nice,
      urls: config.updates.urls,
      crossref: config.updates.crossref,
      version: this.version,
      startedAt: this.startedAt,
      stores: [...this.envs.values()].map((r) => r.store),
      log: this.log,
    });
    this.updateSources = sources;
    await sources.start();
  }

  /**
   * SIGHUP: reads the config again (`read` throws a FaultError listing every fault) and takes what can change
   * live: integrators and their keys, platforms and their Entitlement API settings, update sources. An invalid
   * config is refused whole and the running one kept; settings that need a restart are named and keep their
   * running values. Resolves true when the new config was taken.
   */
  reload(read: () => Config): Promise<boolean> {
    const done = this.reloads.then(() => this.applyReload(read));
    this.reloads = done.catch(() => undefined);
    return done;
  }

  private async applyReload(read: () => Config): Promise<boolean> {
    if (this.closing) return false;
    let next: Config;
    try {
      next = read();
    } catch (e) {
      if (!(e instanceof FaultError)) throw e;
      const [summary, ...problems] = e.fault.message.split('\n');
      this.log.log('error', 'config.reload_refused', {
        code: e.fault.code,
        message: summary,
        problems: problems.map((p) => p.trim()),
        kept: this.config.source,
      });
      return false;
    }
    const changes = configChanges(this.config, next);
    if (changes.restartOnly.length > 0)
      this.log.log('warn', 'config.restart_needed', {
        fields: changes.restartOnly,
        message: `${changes.restartOnly.join(', ')}: changed in the file, kept as running until a restart`,
      });
    if (changes.updates && !(await this.restartUpdates(next))) return false;
    // sources stopped by an earlier failed reload: any later reload tries to start them (its other changes stand)
    if (!changes.updates && !this.updateSources) await this.startStoppedUpdates(next);
    this.keys.replace(next.integrators);
    this.reportKeys.replace(next.platforms);
    // only a change they read: reconfiguring empties the answer caches (a platform's settings may have changed)
    const { added, removed, changed } = changes.platforms;
    if (added.length + removed.length + changed.length > 0 || changes.entitlements)
      this.entitlements.reconfigure(next.platforms, next.entitlements);
    this.platformNames.clear();
    for (const p of next.platforms) this.platformNames.add(p.name);
    const { server, store, ingest, buckets, statusPage, webhooks } = this.config;
    this.config = { ...next, server, store, ingest, buckets, statusPage, webhooks };
    const { restartOnly: _, ...live } = changes;
    this.log.log('info', 'config.reloaded', { source: next.source, ...live });
    return true;
  }

  /**
   * The update sources of `next` in place of the running ones; false when they could not start (a drop folder that
   * cannot be made): the running ones are started again and nothing of the reload is taken (logged).
   */
  private async restartUpdates(next: Config): Promise<boolean> {
    await this.updateSources?.close();
    try {
      await this.followUpdates(next);
      return true;
    } catch (e) {
      await this.updateSources?.close();
      this.log.log('error', 'config.reload_failed', {
        error: String(e),
        kept: this.config.source,
        message: 'the new update sources could not start: nothing of the reload was taken',
      });
      try {
        await this.followUpdates(this.config);
      } catch (again) {
        // neither config's sources start: none run until a reload or restart that can start them (said, not thrown)
        await this.updateSources?.close();
        this.updateSources = undefined;
        this.log.log('error', 'updates.sources_stopped', {
          error: String(again),
          message:
            'the running update sources could not start again either: none are followed until a reload or restart starts them',
        });
      }
      return false;
    }
  }

  private async startStoppedUpdates(next: Config): Promise<void> {
    try {
      await this.followUpdates(next);
      this.log.log('info', 'updates.sources_started', {
        message: 'the update sources stopped by a failed reload run again',
      });
    } catch (e) {
      await this.updateSources?.close();
      this.updateSources = undefined;
      this.log.log('error', 'updates.sources_stopped', {
        error: String(e),
        message: 'the update sources still cannot start: none are followed until a reload or restart starts them',
      });
    }
  }

  /**
   * /readyz: whether a load balancer should send requests here, that is whether they are answered right: every
   * store open and no stop begun. A warming entitlement index, stuck ingestion or a full store leave the answers
   * right (from what the store holds), so they are /healthz's business, not this.
   */
  ready(): { ok: boolean; failed: string[] } {
    this.readinessAsked = true;
    const failed: string[] = [];
    if (this.closing) failed.push('daemon: shutting down');
    for (const [env, r] of this.envs) if (!r.store.isOpen) failed.push(`${env}: store not open`);
    return { ok: failed.length === 0, failed };
  }

  /**
   * /healthz: 200 while every store is open, none is full (a write failed STORE_FULL or DISK_FULL and no file
   * applied since) and no ingestor has files waiting without progress; otherwise 503 with `failed` naming each
   * failed check. S3 is reported, not judged: a replica whose bucket is unreachable still answers from what it
   * holds, and the alert on the listing age says so (docs/operations.md).
   */
  health(): { ok: boolean; failed: string[]; warnings: string[]; checks: Record<string, unknown> } {
    const checks: Record<string, unknown> = {};
    const failed: string[] = [];
    if (this.closing) failed.push('daemon: shutting down');
    const now = Date.now();
    for (const [env, r] of this.envs) {
      const s = r.ingestor.stats;
      const idleMs = now - s.lastProgressAt;
      const stuck = s.queueDepth > 0 && idleMs > STUCK_AFTER_MS;
      if (stuck)
        failed.push(
          `${env}: ingestion stuck: ${s.queueDepth} files waiting, none finished for ${Math.round(idleMs / 1000)} s`,
        );
      // a full map or filesystem: nothing can be applied until the operator makes room (until a file applies again)
      const full = s.storeFull(r.store.appliedSeq().seq);
      if (full) failed.push(`${env}: store full: ${full.code}: ${full.message}`);
      const s3 = r.mirror && {
        lastListingSecondsAgo: r.mirror.lastListingAt ? Math.round((now - r.mirror.lastListingAt) / 1000) : null,
        failing: r.mirror.lastError?.code ?? null,
      };
      // a warming index is not a failure: its lookups read the store, the answers are the same
      const entitlementIndex = this.entitlements.forStore(r.store).index.complete ? 'complete' : 'warming';
      checks[env] = {
        queueDepth: s.queueDepth,
        filesApplied: s.filesApplied,
        quarantined: s.quarantined,
        lagSeconds: s.lagSeconds(),
        stuck,
        storeFull: full?.code ?? null,
        entitlementIndex,
        ...(s3 ? { s3 } : {}),
      };
    }
    const sources = !this.started
      ? { checks: {}, warnings: ['daemon: starting: the buckets are being scanned and the update sources started'] }
      : (this.updateSources?.freshness(now) ?? {
          checks: {},
          warnings: [
            'update sources: stopped (a reload could not start them, nor the running ones again): none are followed until a reload or restart starts them',
          ],
        });
    if (Object.keys(sources.checks).length > 0) checks.updateSources = sources.checks;
    return { ok: failed.length === 0, failed, warnings: sources.warnings, checks };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      // /readyz answers 503 from here on. A load balancer that asks it needs its checks' time to take this replica
      // out, and sends requests meanwhile: they are served, and the port closes after the drain. Nothing asked
      // /readyz since the start: nothing would notice, so nothing is waited for.
      const drainMs = this.readinessAsked && this.url ? this.config.server.drainMs : 0;
      if (drainMs > 0)
        this.log.log('info', 'daemon.draining', {
          seconds: drainMs / 1000,
          message: '/readyz answers 503; requests are served until the port closes at the end of the drain',
        });
      // a start or reload under way ends first (one queued after it sees `closing` and takes nothing): closing the
      // stores under it would leave it starting update sources on closed stores. Bounded: a start that hangs (a
      // folder on a dead mount) must not hold the stop for ever. The drain runs beside it, not after.
      const [ended] = await Promise.all([settlesWithin(this.reloads, RELOADS_END_MS), delay(drainMs)]);
      if (!ended)
        this.log.log('error', 'daemon.close_failed', {
          error: `a start or reload still running after ${RELOADS_END_MS / 1000} s: closing under it`,
        });
      for (const close of this.closers.reverse()) {
        try {
          await close();
        } catch (e) {
          this.log.log('error', 'daemon.close_failed', { error: String(e) });
        }
      }
      // the process must not exit while a read worker is inside LMDB: they end when their read does
      if (!(await jobWorkersEnded(WORKERS_END_MS)))
        this.log.log('error', 'daemon.close_failed', {
          error: `store reads on worker threads still running after ${WORKERS_END_MS / 1000} s: the process ends when they do`,
        });
      this.log.log('info', 'daemon.stopped', {});
    })();
    return this.closing;
  }
}
