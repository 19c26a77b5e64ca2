import type { Logger } from '../../base/index.ts';
import { type Fault, fault } from '../../base/index.ts';
import type { CrossrefHarvestSettings } from '../../config/index.ts';
import { crossrefUserAgent } from '../../crossref/index.ts';
import { doiKey } from '../../doi/index.ts';
import type { FeedImport, Store } from '../../store/index.ts';
import { commitEvery, newReport, rowsOfWork, skippedFaults } from '../import/index.ts';
import { type ClientOptions, CrossrefClient, stopped } from './crossref-client.ts';
import {
  type HarvestState,
  heldByOther,
  loadState,
  PASSES,
  saveState,
  type WindowFigures,
  type WindowProgress,
  windowFilter,
  windowOf,
} from './harvest-state.ts';

/**
 * One harvest of the Crossref REST API (docs/design.md, "Harvesting Crossref"). A run takes the window from the
 * index date last reached to today, walks its passes with cursors (PASSES), streams every page's rows into each
 * store's scratch import, saves its progress after every page, and commits the window whole at the end. An
 * expired cursor, or a walk that did not receive every work it announced, restarts the window; any other failure
 * ends the run with the window kept, and the next run carries on from the last saved page.
 */

/** the feed the harvest's updates are kept under (one feed, whatever harvest brought them) */
export const HARVEST_ORIGIN = 'crossref-rest';
/** a window restarted this often (counted with the window, across runs) is dropped: the next run begins a new one */
const MAX_RESTARTS = 3;

export interface HarvestProgress {
  pass: string;
  pages: number;
  works: number;
  received: number;
  total: number;
}

export interface HarvestRunOptions {
  /** from the configured start, replacing the whole feed */
  full?: boolean;
  allowShrink?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: HarvestProgress) => void;
  now?: () => number;
}

export class CrossrefHarvest {
  readonly client: CrossrefClient;
  /** saves the window's heartbeat while a page is tried again (a run's walk sets it) */
  private heartbeat: (() => Promise<void>) | undefined;

  constructor(
    readonly settings: CrossrefHarvestSettings,
    private readonly stores: readonly Store[],
    private readonly log: Logger,
    opts: { version: string } & Partial<ClientOptions>,
  ) {
    this.client = new CrossrefClient({
      baseUrl: settings.url,
      mailto: settings.mailto,
      userAgent: harvestUserAgent(opts.version, settings.mailto),
      ...(settings.plusToken ? { plusToken: settings.plusToken } : {}),
      onRetry: (r) => {
        log.log('warn', 'harvest.retry', { harvest: settings.name, ...r });
        // the tries of one page can last half an hour: the window stays held (heldByOther) meanwhile
        void this.heartbeat?.().catch(() => undefined);
      },
      ...opts,
    });
  }

  /** Where the harvest's progress is kept: the first store (every store gets the same rows). */
  private get home(): Store {
    return this.stores[0]!;
  }

  state(): HarvestState {
    return loadState(this.home, this.settings.name);
  }

  /** Runs one window to its end; the figures of the committed window, or the Fault that stopped it. */
  async run(opts: HarvestRunOptions = {}): Promise<WindowFigures | Fault> {
    const now = opts.now ?? Date.now;
    const state = this.state();
    // a window left by an earlier run is claimed before its imports are touched (resumed, or dropped)
    if (state.window) Object.assign(state.window, { pid: process.pid, heartbeatAt: now() });
    const refused = await this.claim(state, now());
    if (refused) return refused;
    const result = await this.walk(state, opts, now);
    if ('code' in result && result.code === 'HARVEST_STOPPED') {
      // a stop is no failure: the progress saved after the last page is where the next run carries on (and a
      // window another process claimed meanwhile is its to save)
      if (opts.signal?.aborted)
        this.log.log('info', 'harvest.stopped', { harvest: this.settings.name, window: windowOf(state.window) });
      return result;
    }
    if ('code' in result) {
      state.lastFailureAt = now();
      state.lastError = { code: result.code, message: result.message };
      await saveState(this.home, this.settings.name, state);
      this.log.log('error', 'harvest.failed', {
        harvest: this.settings.name,
        code: result.code,
        message: result.message,
        window: windowOf(state.window),
      });
    }
    return result;
  }

  private async walk(state: HarvestState, opts: HarvestRunOptions, now: () => number): Promise<WindowFigures | Fault> {
    const full = opts.full ?? this.fullDue(state, now());
    let imports: FeedImport[] | undefined;
    // a window left by an earlier run is finished first, unless a full harvest is asked for over an incremental one
    if (state.window && (!full || state.window.full)) imports = await this.resume(state.window);
    if (state.window && !imports) await this.dropWindow(state.window);
    let w: WindowProgress = imports ? state.window! : this.newWindow(state, full, now());
    imports ??= this.beginImports(w, now());
    state.window = w;
    w.pid = process.pid;
    w.heartbeatAt = now();
    // a new window is claimed before its first call, not after its first page (another process may look meanwhile)
    const refused = await this.claim(state, now());
    if (refused) return refused;
    // a copy as it is now: the write may run after the page came and the progress moved on unsaved
    this.heartbeat = () =>
      saveState(this.home, this.settings.name, structuredClone({ ...state, window: { ...w, heartbeatAt: now() } }));
    const started = now();
    while (w.pass < PASSES.length) {
      if (opts.signal?.aborted) return stopped();
      const pass = PASSES[w.pass]!;
      const page = await this.client.works(
        {
          filter: `${windowFilter(w)},${pass.filter}`,
          select: pass.select,
          rows: this.settings.rows,
          cursor: w.cursor,
        },
        opts.signal,
      );
      if ('code' in page) {
        if (page.code !== 'HARVEST_CURSOR_EXPIRED') return page;
        const restarted = await this.restart(w, imports, page.message, now());
        if ('code' in restarted) return this.giveUp(state, restarted, now());
        [w, imports] = [restarted.w, restarted.imports];
        state.window = w;
        continue;
      }
      w.total = page.totalResults;
      w.pages++;
      for (const work of page.items) {
        const doi = typeof work.DOI === 'string' ? work.DOI : '?';
        for (const row of rowsOfWork(work, w.pages, w.report, `page ${w.pages} (${pass.name}), work ${doi}`)) {
          const key = doiKey(row.doi);
          for (const imp of imports) {
            const wait = imp.add(key, row);
            if (wait) await wait;
          }
        }
      }
      w.received += page.items.length;
      w.works += page.items.length;
      const ended = page.items.length < this.settings.rows || page.nextCursor === undefined;
      if (ended && w.received < w.total) {
        // a page was lost (a call tried again after the server had moved the cursor on): the window starts again
        const restarted = await this.restart(
          w,
          imports,
          `the ${pass.name} walk received ${w.received} of the ${w.total} works it announced`,
          now(),
        );
        if ('code' in restarted) return this.giveUp(state, restarted, now());
        [w, imports] = [restarted.w, restarted.imports];
        state.window = w;
        continue;
      }
      if (ended) [w.pass, w.cursor, w.received, w.total] = [w.pass + 1, '*', 0, 0];
      else w.cursor = page.nextCursor!;
      await this.saveProgress(state, imports, now());
      opts.onProgress?.({ pass: pass.name, pages: w.pages, works: w.works, received: w.received, total: w.total });
    }
    // a stop while the last page was still coming: its progress is saved, and the next run commits
    if (opts.signal?.aborted) return stopped();
    return this.commit(state, imports, opts, now, started);
  }

  /**
   * Saves the state, claiming its window, unless another live process holds the window as saved: the check and the
   * claim are one write transaction, so two runs started at once do not both take it.
   */
  private async claim(state: HarvestState, at: number): Promise<Fault | undefined> {
    const other = await this.home.saveSourceState(
      'harvest',
      this.settings.name,
      state,
      (saved: HarvestState | undefined) => heldByOther(saved?.window, at),
    );
    return other === undefined
      ? undefined
      : fault('HARVEST_STOPPED', `harvest ${this.settings.name} is being run by process ${other}; not started`);
  }

  /**
   * A run is full when asked, on the first harvest (it reads everything anyway), and when the last full one is
   * older than `fullEveryMs`: an incremental window cannot see a work whose last update was withdrawn (neither
   * filter selects it any more), a full one replaces the whole feed.
   */
  private fullDue(state: HarvestState, at: number): boolean {
    if (state.reached === undefined) return true;
    if (state.fullGaveUpAt !== undefined) return false;
    const every = this.settings.fullEveryMs;
    return every > 0 && at - (state.lastFullAt ?? 0) > every;
  }

  /**
   * The window is dropped (its imports already are): the next run starts it afresh. After a full window, the next
   * run is incremental, and the one after tries the full again: a full window that keeps failing (it reads all
   * of Crossref's updates, so it meets the most faults) must not hold back the notices indexed since.
   */
  private giveUp(state: HarvestState, f: Fault, at: number): Fault {
    if (state.window?.full) state.fullGaveUpAt = at;
    state.window = undefined;
    return f;
  }

  private newWindow(state: HarvestState, full: boolean, at: number): WindowProgress {
    const from = full ? this.settings.from : (state.reached ?? this.settings.from);
    const until = new Date(at).toISOString().slice(0, 10);
    return {
      ...(from ? { from } : {}),
      until,
      full,
      ...walkFromStart(),
      restarts: 0,
      startedAt: at,
      pid: process.pid,
      heartbeatAt: at,
    };
  }

  private beginImports(w: WindowProgress, at: number): FeedImport[] {
    return this.stores.map((s) => {
      const imp = s.beginUpdatesImport(HARVEST_ORIGIN, w.full ? 'snapshot' : 'works', at);
      w.imports[s.env] = { id: imp.importId, rows: 0 };
      return imp;
    });
  }

  /** The window's imports as saved, rows after the last saved page dropped; undefined when any lost rows. */
  private async resume(w: WindowProgress): Promise<FeedImport[] | undefined> {
    const imports: FeedImport[] = [];
    for (const s of this.stores) {
      const saved = w.imports[s.env];
      if (!saved) return undefined;
      const imp = s.beginUpdatesImport(HARVEST_ORIGIN, w.full ? 'snapshot' : 'works', Date.now(), saved);
      const held = imp.scratchRows();
      if (held < saved.rows) {
        this.log.log('warn', 'harvest.window_restarted', {
          harvest: this.settings.name,
          reason: `${s.env}: ${saved.rows - held} saved rows are gone from the scratch space`,
        });
        return undefined;
      }
      if (held > saved.rows) await imp.truncateTo(saved.rows);
      imports.push(imp);
    }
    this.log.log('info', 'harvest.resumed', {
      harvest: this.settings.name,
      window: windowOf(w),
      pass: PASSES[w.pass]?.name,
      pages: w.pages,
    });
    return imports;
  }

  private async dropWindow(w: WindowProgress): Promise<void> {
    for (const s of this.stores)
      if (w.imports[s.env]) await s.beginUpdatesImport(HARVEST_ORIGIN, 'works', Date.now(), w.imports[s.env]).abort();
  }

  private async restart(
    w: WindowProgress,
    imports: FeedImport[],
    reason: string,
    at: number,
  ): Promise<{ w: WindowProgress; imports: FeedImport[] } | Fault> {
    await Promise.all(imports.map((i) => i.abort()));
    if (w.restarts + 1 > MAX_RESTARTS)
      return fault(
        'HARVEST_CURSOR_EXPIRED',
        `${reason}; the window was restarted ${MAX_RESTARTS} times, giving up until the next run`,
      );
    this.log.log('warn', 'harvest.window_restarted', { harvest: this.settings.name, window: windowOf(w), reason });
    const fresh: WindowProgress = {
      ...w,
      ...walkFromStart(),
      restarts: w.restarts + 1,
    };
    return { w: fresh, imports: this.beginImports(fresh, at) };
  }

  /** Scratch rows first, then the progress naming them: a crash between the two only repeats a page. */
  private async saveProgress(state: HarvestState, imports: FeedImport[], at: number): Promise<void> {
    const w = state.window!;
    await Promise.all(imports.map((i) => i.flush()));
    this.stores.forEach((s, i) => (w.imports[s.env] = { id: imports[i]!.importId, rows: imports[i]!.rowsAdded }));
    w.heartbeatAt = at;
    await saveState(this.home, this.settings.name, state);
  }

  private async commit(
    state: HarvestState,
    imports: FeedImport[],
    opts: HarvestRunOptions,
    now: () => number,
    started: number,
  ): Promise<WindowFigures | Fault> {
    const w = state.window!;
    const committed = await commitEvery(this.stores, imports, { allowShrink: opts.allowShrink });
    if ('code' in committed) {
      state.window = undefined;
      // a refused full window is not tried again every run (each reads all of Crossref's updates): the next
      // runs are incremental from where the last good window ended, and the operator decides (--full --allow-shrink)
      if (w.full && committed.code === 'SNAPSHOT_SHRINK') state.lastFullAt = now();
      return committed;
    }
    const { applied } = committed;
    const figures: WindowFigures = {
      ...(w.from ? { from: w.from } : {}),
      until: w.until,
      full: w.full,
      works: w.works,
      rows: w.report.used + Object.values(w.report.skipped).reduce((a, b) => a + (b ?? 0), 0),
      used: w.report.used,
      skipped: w.report.skipped,
      pages: w.pages,
      applied,
      ms: Math.round(now() - started),
      finishedAt: now(),
    };
    Object.assign(state, { reached: w.until, lastSuccessAt: figures.finishedAt, last: figures, window: undefined });
    if (w.full) state.lastFullAt = figures.finishedAt;
    delete state.lastError;
    delete state.fullGaveUpAt; // the notices are caught up: the next run may try the full window again
    await saveState(this.home, this.settings.name, state);
    this.log.log(skippedFaults(w.report) ? 'warn' : 'info', 'harvest.window_committed', {
      harvest: this.settings.name,
      ...figures,
      firstSkipped: w.report.firstSkipped.slice(0, 3),
    });
    return figures;
  }
}

/** What the service calls itself to Crossref: its name and version, and the contact (the polite pool asks for one). */
function harvestUserAgent(version: string, mailto: string): string {
  return crossrefUserAgent(`doi-holdings/${version}`, mailto);
}

/** A window's walk from its first pass and page, nothing received yet: a new window's, or a restarted one's. */
function walkFromStart() {
  return { pass: 0, cursor: '*', received: 0, total: 0, pages: 0, works: 0, report: newReport(), imports: {} };
}
