import type { Store } from '../../store/index.ts';
import type { ConditionalState } from '../import/index.ts';
import type { SourceOutcome } from './child-process.ts';

/**
 * What the store keeps of an update URL the daemon follows (its sourceState 'url'): the validators for the next
 * conditional GET, and how fresh the source is, so that a restart, `--stats` and /metrics tell the same as the
 * daemon that fetched it. Times in ms.
 */
export interface UrlSourceState extends ConditionalState {
  /** the last fetch that was read whole or answered not-modified */
  lastSuccessAt?: number;
  lastFailureAt?: number;
  /** why the last failed fetch failed */
  lastError?: { code: string; message: string };
  /** the last fetch that imported the source (a not-modified answer keeps it) */
  last?: { at: number; rows: number; used: number; works: number };
}

export function loadUrlState(store: Store, url: string): UrlSourceState {
  return store.sourceState<UrlSourceState>('url', url) ?? {};
}

/** The validators to send with the next fetch. */
export function validatorsOf(s: UrlSourceState): ConditionalState {
  return { ...(s.etag ? { etag: s.etag } : {}), ...(s.lastModified ? { lastModified: s.lastModified } : {}) };
}

/**
 * The state after a fetch. An import replaces the validators with the answer's (none kept when it gave none: the
 * old ones named another version); a failure keeps them, and keeps the last success.
 */
export function nextUrlState(prev: UrlSourceState, outcome: SourceOutcome, at: number): UrlSourceState {
  if ('code' in outcome)
    return { ...prev, lastFailureAt: at, lastError: { code: outcome.code, message: outcome.message } };
  if ('notModified' in outcome) return { ...prev, lastSuccessAt: at };
  const { report } = outcome.parsed;
  const failed =
    prev.lastFailureAt !== undefined
      ? { lastFailureAt: prev.lastFailureAt, ...(prev.lastError ? { lastError: prev.lastError } : {}) }
      : {};
  return {
    ...validatorsOf(outcome.state ?? {}),
    lastSuccessAt: at,
    ...failed,
    last: { at, rows: report.rows, used: report.used, works: outcome.parsed.works },
  };
}
