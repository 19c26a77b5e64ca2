import { mkdirSync, type Stats, statSync } from 'node:fs';
import { join } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from '../../base/index.ts';
import { type FileStat, heldStill, scanBucketFolder, toKey } from '../../bucket/index.ts';
import type { CrossrefHarvestSettings, UpdateUrlSettings } from '../../config/index.ts';
import { isHiddenOrTemp } from '../../deposit/index.ts';
import type { Store } from '../../store/index.ts';
import type { UpdateFormat } from '../../update-record/index.ts';
import { type HarvestState, loadState } from '../harvest/index.ts';
import type { ConditionalState } from '../import/index.ts';
import { importFigures, skippedFaults } from '../import/index.ts';
import { importInProcess, type SourceOutcome } from './child-process.ts';
import { harvestInProcess } from './harvest-process.ts';
import { loadUrlState, nextUrlState, type UrlSourceState, validatorsOf } from './url-state.ts';

/**
 * The update sources the daemon follows (docs/design.md, "Update information"): files dropped into a folder,
 * and URLs fetched on a schedule with conditional GET, each imported in a process of its own (child-process.ts),
 * and Crossref harvests. Imports run one at a time; each goes to every environment. A URL or harvest has at most one
 * run queued or running: a tick that finds one is skipped, so a run slower than its interval cannot pile up runs
 * behind itself (and keep dropped files and other sources waiting behind them).
 */
/** What /metrics tells of a followed source (times in ms; 0: never). */
export interface SourceStatus {
  /** the last import or not-modified answer */
  lastSuccessAt: number;
  lastFailureAt: number;
  /** how often a URL is fetched or a harvest runs; undefined for the drop folder (files come when they come) */
  everyMs?: number;
  /** no success for this long: stale (a /healthz warning and the alert); undefined for the drop folder */
  staleAfterMs?: number;
  /** a harvest's stored state: the window reached and the last window's figures */
  harvest?: () => HarvestState;
  /** a URL's stored state: its last import's figures */
  url?: () => UrlSourceState;
  /** when its schedule runs it next (ms; the operator console shows it); undefined for the drop folder */
  nextRunAt?: number;
}

export class FollowedSources {
  /** per URL, and `dropDir` for the drop folder's files */
  readonly status = new Map<string, SourceStatus>();
  private watcher: FSWatcher | undefined;
  /** each schedule's stop */
  private stops: (() => void)[] = [];
  /** URLs and harvests with a run queued or running */
  private readonly pending = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** stops a harvest between pages at close (its progress is saved: the next start carries on) */
  private readonly stopping = new AbortController();
  private startedAt = Date.now();

  constructor(
    private readonly opts: {
      dropDir?: string;
      /** of the import process (child-process.ts) */
      nice: number;
      urls: readonly UpdateUrlSettings[];
      crossref?: readonly CrossrefHarvestSettings[];
      stores: readonly Store[];
      log: Logger;
      /** the service's version, for the User-Agent of harvests */
      version?: string;
      /** when the daemon started: a source never read whole is stale counted from it (a reload does not reset it) */
      startedAt?: number;
      /** calls `tick` every `ms` until the returned stop is called (tests tick by hand); setInterval by default */
      schedule?: (tick: () => void, ms: number) => () => void;
    },
  ) {}

  async start(): Promise<void> {
    const { dropDir, urls } = this.opts;
    this.startedAt = this.opts.startedAt ?? Date.now();
    if (dropDir) {
      mkdirSync(dropDir, { recursive: true });
      // hidden and temporary names (a download in progress) are skipped here as in the start-up scan below
      this.watcher = watch(dropDir, {
        ignoreInitial: true,
        ignored: (path: string) => path !== dropDir && isHiddenOrTemp(toKey(dropDir, path)),
        awaitWriteFinish: { stabilityThreshold: DROP_STABLE_MS, pollInterval: 50 },
        depth: 0,
      });
      const onFile = (path: string) => this.enqueue(path, () => this.importFile(path));
      this.watcher.on('add', onFile).on('change', onFile);
      await new Promise<void>((r) => this.watcher!.once('ready', () => r()));
      const listed = new Map<string, FileStat>();
      for (const key of await scanBucketFolder(dropDir)) {
        const path = join(dropDir, key);
        const s = key.includes('/') ? undefined : dropStat(path);
        if (s) listed.set(path, s);
      }
      // a file still being copied in would be imported cut short, as a snapshot: its missing rows withdrawn. It is
      // left to the watch, whose change event comes once it has held still (awaitWriteFinish)
      const existing = (await heldStill(listed, DROP_STABLE_MS, dropStat)).sort(
        (a, b) => listed.get(a)!.lastModified - listed.get(b)!.lastModified,
      );
      if (this.closed) return; // stopped during the wait: no timers are set
      for (const path of existing) this.enqueue(path, () => this.importFile(path));
    }
    for (const u of urls) {
      // what it last did is read from the store, so a restart keeps it
      const state = () => loadUrlState(this.state, u.url);
      const { lastSuccessAt = 0, lastFailureAt = 0 } = state();
      this.status.set(u.url, {
        lastSuccessAt,
        lastFailureAt,
        everyMs: u.everyMs,
        staleAfterMs: u.staleAfterMs,
        url: state,
      });
      this.every(u.url, u.everyMs, () => this.importUrl(u));
    }
    for (const h of this.opts.crossref ?? []) this.followHarvest(h);
  }

  /**
   * A harvest runs at start and every `everyMs`, in a process of its own (harvest-process.ts); what it last did is read
   * from the store, so a restart keeps it.
   */
  private followHarvest(settings: CrossrefHarvestSettings): void {
    const label = `crossref:${settings.name}`;
    const state = () => loadState(this.state, settings.name);
    const status: SourceStatus = {
      lastSuccessAt: 0,
      lastFailureAt: 0,
      everyMs: settings.everyMs,
      staleAfterMs: settings.staleAfterMs,
      harvest: state,
    };
    const refresh = () => {
      const { lastSuccessAt, lastFailureAt } = state();
      Object.assign(status, { lastSuccessAt, lastFailureAt });
    };
    refresh();
    this.status.set(label, status);
    const run = async () => {
      await harvestInProcess(settings, this.opts.stores, this.opts.log, {
        version: this.opts.version ?? '0',
        signal: this.stopping.signal,
      });
      refresh();
    };
    this.every(label, settings.everyMs, run);
  }

  /**
   * Per source, what /healthz shows, and a warning for each stale one: no success for its `staleAfterMs`
   * (counted from the daemon's start when it never succeeded; a restart or reload resets neither). A stale
   * source is amber, not a failure: the replica still answers correctly from what it holds.
   */
  freshness(now = Date.now()): { checks: Record<string, unknown>; warnings: string[] } {
    const checks: Record<string, unknown> = {};
    const warnings: string[] = [];
    for (const [label, s] of this.status) {
      // a success remembered from before a restart counts as it is: a restart or a reload does not make a source fresh
      const since = s.lastSuccessAt || this.startedAt;
      const stale = s.staleAfterMs !== undefined && now - since > s.staleAfterMs;
      const harvest = s.harvest?.();
      const url = s.url?.();
      checks[label] = {
        state: stale ? 'stale' : 'ok',
        lastSuccessAt: s.lastSuccessAt ? new Date(s.lastSuccessAt).toISOString() : null,
        lastFailureAt: s.lastFailureAt ? new Date(s.lastFailureAt).toISOString() : null,
        ...(harvest ? { reached: harvest.reached ?? null, lastError: harvest.lastError?.code ?? null } : {}),
        ...(url ? { lastError: url.lastError?.code ?? null } : {}),
      };
      if (stale) {
        const ago = s.lastSuccessAt
          ? `last success ${hours(now - s.lastSuccessAt)} ago`
          : `no success since start ${hours(now - this.startedAt)} ago`;
        warnings.push(`update source ${label} is stale: ${ago} (stale after ${hours(s.staleAfterMs!)})`);
      }
    }
    return { checks, warnings };
  }

  /** Resolves when every queued import has finished (tests). */
  idle(): Promise<void> {
    return this.chain;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    for (const stop of this.stops) stop();
    await this.watcher?.close();
    await this.chain;
  }

  /** `source`: the file's path, the URL or the harvest's label, as in the source's other log lines */
  private enqueue(source: string, task: () => Promise<void>): Promise<void> {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : task()))
      .catch((e) => this.opts.log.log('error', 'updates.import_failed', { source, error: String(e) }));
    return this.chain;
  }

  /**
   * Runs a URL or harvest now and every `ms`. A tick while its last run is still queued or running is skipped: the
   * queue holds one run of it at most. (A dropped file is queued again on every change: its new content is another import.)
   */
  private every(source: string, ms: number, task: () => Promise<void>): void {
    const tick = () => {
      const status = this.status.get(source);
      if (status) status.nextRunAt = Date.now() + ms;
      if (this.pending.has(source)) {
        this.opts.log.log('info', 'updates.run_skipped', { source });
        return;
      }
      this.pending.add(source);
      void this.enqueue(source, task).finally(() => this.pending.delete(source));
    };
    tick();
    const schedule =
      this.opts.schedule ??
      ((t, every) => {
        const timer = setInterval(t, every);
        return () => clearInterval(timer);
      });
    this.stops.push(schedule(tick, ms));
  }

  /** Where what is known of each source is kept: the first store's (every store gets the same imports). */
  private get state(): Store {
    return this.opts.stores[0]!;
  }

  /** A dropped file already imported with the same size and mtime is not read again. */
  private async importFile(path: string): Promise<void> {
    let s: Stats;
    try {
      s = statSync(path);
    } catch {
      return;
    }
    const seen = this.state.sourceState<{ size: number; mtimeMs: number }>('file', path);
    if (seen && seen.size === s.size && seen.mtimeMs === s.mtimeMs) return;
    const result = await this.run(path, {});
    if (!result) return;
    // the drop folder's times are held here only: files come when they come, so it is never stale
    let status = this.status.get('dropDir');
    if (!status) this.status.set('dropDir', (status = { lastSuccessAt: 0, lastFailureAt: 0 }));
    if ('code' in result) status.lastFailureAt = Date.now();
    else status.lastSuccessAt = Date.now();
    if ('parsed' in result) await this.state.saveSourceState('file', path, { size: s.size, mtimeMs: s.mtimeMs });
  }

  private async importUrl(u: UpdateUrlSettings): Promise<void> {
    const prev = loadUrlState(this.state, u.url);
    const result = await this.run(u.url, { format: u.format, conditional: validatorsOf(prev) });
    if (!result) return;
    const next = nextUrlState(prev, result, Date.now());
    // told before it is saved: a scrape between the two would see the import's figures without its success
    Object.assign(this.status.get(u.url)!, {
      lastSuccessAt: next.lastSuccessAt ?? 0,
      lastFailureAt: next.lastFailureAt ?? 0,
    });
    await this.state.saveSourceState('url', u.url, next);
  }

  /** Imports one source, logging how it ended: the outcome, or undefined when a stop ended it. */
  private async run(
    source: string,
    opts: { format?: UpdateFormat; conditional?: ConditionalState },
  ): Promise<SourceOutcome | undefined> {
    const { stores, log } = this.opts;
    const started = performance.now();
    const result = await importInProcess(
      stores,
      source,
      { ...opts, nice: this.opts.nice, signal: this.stopping.signal },
      log,
    );
    if ('code' in result && this.stopping.signal.aborted) {
      // the daemon stopping or its sources reloading ended the import: not the source's failure; done again later
      log.log('info', 'updates.import_stopped', { source, code: result.code });
      return undefined;
    }
    if ('code' in result) {
      log.log('error', 'updates.source_failed', { source, code: result.code, message: result.message });
      return result;
    }
    if ('notModified' in result) {
      log.log('info', 'updates.not_modified', { source });
      return result;
    }
    // a log line shows 3 skipped rows; --import-updates, the same figures, shows more
    log.log(
      skippedFaults(result.parsed.report) ? 'warn' : 'info',
      'updates.imported',
      importFigures(result, performance.now() - started, 3),
    );
    return result;
  }
}

function hours(ms: number): string {
  return ms >= 3600_000 ? `${(ms / 3600_000).toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}

/** A dropped file is taken once its size and time held this long (the watch's write-finish, the start-up scan). */
const DROP_STABLE_MS = 300;

/** A dropped file's size and mtime (links followed, as its import reads it), or undefined once it is gone. */
function dropStat(path: string): FileStat | undefined {
  try {
    const s = statSync(path);
    return { size: s.size, lastModified: s.mtimeMs };
  } catch {
    return undefined;
  }
}
