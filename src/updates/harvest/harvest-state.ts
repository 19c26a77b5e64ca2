import type { ReplaceReport, Store } from '../../store/index.ts';
import type { ImportReport } from '../import/index.ts';

/**
 * What the store keeps of a harvest (META `updatesHarvest:<name>`), written after every page: the index date
 * reached, the last whole window's figures, and the window in progress, so a crash or restart carries on
 * where it stopped.
 */
export interface HarvestState {
  /** YYYY-MM-DD: the next window starts at this index date (inclusive); absent: the beginning */
  reached?: string;
  /** ms since the epoch; 0: never */
  lastSuccessAt: number;
  lastFailureAt: number;
  /** when a full window last committed */
  lastFullAt?: number;
  /** when a full window was last given up: the next run is incremental (CrossrefHarvest.giveUp) */
  fullGaveUpAt?: number;
  lastError?: { code: string; message: string };
  /** the last window that committed */
  last?: WindowFigures;
  /** a window begun and not committed */
  window?: WindowProgress;
}

export interface WindowFigures {
  from?: string;
  until: string;
  full: boolean;
  /** works read (items of every page) */
  works: number;
  /** update rows read from them, and those used */
  rows: number;
  used: number;
  skipped: ImportReport['skipped'];
  pages: number;
  /** what each environment's store did with it */
  applied: Record<string, ReplaceReport>;
  ms: number;
  finishedAt: number;
}

/**
 * The passes of a window: works that are notices (`update-to`), then works that carry updates (`updated-by`).
 * Both fields are asked for in both: a relation deposited both ways is told apart only with both (crossref.ts).
 */
export const PASSES = [
  { name: 'notices', filter: 'is-update:true', select: 'DOI,created,update-to,updated-by' },
  { name: 'updated', filter: 'has-update:true', select: 'DOI,created,update-to,updated-by' },
] as const;

export interface WindowProgress {
  from?: string;
  until: string;
  /** a full harvest replaces the whole feed (a snapshot); an incremental one only the works it reads */
  full: boolean;
  /** index into PASSES */
  pass: number;
  /** the cursor of the next page (`*`: the pass starts) */
  cursor: string;
  /** works received in this pass so far, and how many the walk holds */
  received: number;
  total: number;
  pages: number;
  works: number;
  report: ImportReport;
  /** per environment: the scratch import the window's rows go to, and how many rows it holds */
  imports: Record<string, { id: string; rows: number }>;
  /** restarts of this window (an expired cursor, a walk that lost works) */
  restarts: number;
  startedAt: number;
  /** the process working on it, and when it last saved, so a second one does not take the same window */
  pid: number;
  heartbeatAt: number;
}

/** A window not saved for this long is free to take, whatever its pid (pids are reused after a crash). */
const HELD_FOR_MS = 15 * 60_000;

export function loadState(store: Store, name: string): HarvestState {
  return store.sourceState<HarvestState>('harvest', name) ?? { lastSuccessAt: 0, lastFailureAt: 0 };
}

export async function saveState(store: Store, name: string, state: HarvestState): Promise<void> {
  await store.saveSourceState('harvest', name, state);
}

/** Whether another live process is working on this window (its pid answers signal 0 and it saved lately). */
export function heldByOther(w: WindowProgress | undefined, now = Date.now()): number | undefined {
  if (!w || w.pid === process.pid || now - w.heartbeatAt > HELD_FOR_MS) return undefined;
  try {
    process.kill(w.pid, 0);
    return w.pid;
  } catch {
    return undefined;
  }
}

/** The index-date filter of a window (both ends inclusive). */
export function windowFilter(w: WindowProgress): string {
  return `${w.from ? `from-index-date:${w.from},` : ''}until-index-date:${w.until}`;
}

export function windowOf(w: WindowProgress | undefined): string | undefined {
  return w ? `${w.from ?? 'start'}..${w.until}` : undefined;
}
