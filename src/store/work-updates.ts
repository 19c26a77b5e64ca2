import { updateIdentity as identity, type UpdateObject } from '../updates/schema.ts';

/**
 * Update information per work (docs/design.md, "Update information"), in the `updates` sub-database keyed by DOI key.
 * Each stored update remembers the import feed (`origin`) it came from, so re-importing a feed replaces only
 * that feed's entries. Every change is also an event in the work's entry (time = the update's own date).
 */

export interface StoredUpdate extends UpdateObject {
  origin: string;
}

export type UpdateEventKind = 'added' | 'changed' | 'withdrawn';

export interface UpdateEvent {
  kind: UpdateEventKind;
  /** the update's date (ISO at the source's precision), never the wall clock */
  time: string;
  source: string;
  updateType: string;
  updateDoi: string | null;
}

export interface UpdatesEntry {
  /** the work's DOI as the source gave it */
  doi: string;
  updates: StoredUpdate[];
  events: UpdateEvent[];
}

export interface WorkUpdates {
  doi: string;
  updates: UpdateObject[];
}

export interface ReplaceReport {
  worksTouched: number;
  updatesAdded: number;
  updatesChanged: number;
  updatesWithdrawn: number;
  updatesUnchanged: number;
}

/** How a feed's import replaces earlier data: the whole feed (a database snapshot) or only the works it names. */
export type ReplaceMode = 'snapshot' | 'works';


/**
 * The work's entry after replacing `origin`'s updates with `incoming` (one per (source, updateDoi, updateType):
 * a later one in `incoming` wins); `before` itself when nothing changed.
 */
export function mergeWork(before: UpdatesEntry | undefined, incoming: WorkUpdates | undefined, origin: string, report: ReplaceReport): UpdatesEntry | undefined {
  const kept = (before?.updates ?? []).filter((u) => u.origin !== origin);
  const old = new Map((before?.updates ?? []).filter((u) => u.origin === origin).map((u) => [identity(u), u]));
  const fresh = new Map<string, StoredUpdate>();
  for (const u of incoming?.updates ?? []) fresh.set(identity(u), { ...u, origin });
  const events: UpdateEvent[] = [];
  for (const [id, u] of fresh) {
    const prev = old.get(id);
    if (!prev) {
      events.push(eventOf('added', u));
      report.updatesAdded++;
    } else if (!sameUpdate(prev, u)) {
      events.push(eventOf('changed', u));
      report.updatesChanged++;
    } else report.updatesUnchanged++;
  }
  for (const [id, u] of old) {
    if (fresh.has(id)) continue;
    events.push(eventOf('withdrawn', u));
    report.updatesWithdrawn++;
  }
  if (events.length === 0) return before;
  const updates = [...kept, ...fresh.values()];
  if (updates.length === 0 && !before) return undefined;
  return { doi: incoming?.doi ?? before!.doi, updates, events: [...(before?.events ?? []), ...events] };
}

function eventOf(kind: UpdateEventKind, u: UpdateObject): UpdateEvent {
  return { kind, time: u.updateDate, source: u.source, updateType: u.updateType, updateDoi: u.updateDoi };
}

function sameUpdate(a: UpdateObject, b: UpdateObject): boolean {
  return (
    a.updateDate === b.updateDate &&
    a.reasons.length === b.reasons.length &&
    a.reasons.every((r, i) => r === b.reasons[i]) &&
    a.urls.length === b.urls.length &&
    a.urls.every((r, i) => r === b.urls[i])
  );
}

/**
 * What the APIs serve for a work: one update per (source, updateDoi, updateType) across origins (the fuller
 * one wins), oldest `updateDate` first.
 */
export function servedUpdates(entry: UpdatesEntry | undefined): UpdateObject[] {
  if (!entry) return [];
  const best = new Map<string, StoredUpdate>();
  for (const u of entry.updates) {
    const id = identity(u);
    const prev = best.get(id);
    if (!prev || u.reasons.length + u.urls.length > prev.reasons.length + prev.urls.length) best.set(id, u);
  }
  return [...best.values()]
    .sort((a, b) => (a.updateDate < b.updateDate ? -1 : a.updateDate > b.updateDate ? 1 : identity(a) < identity(b) ? -1 : 1))
    .map(({ updateDoi, source, updateType, updateDate, reasons, urls }) => ({ updateDoi, source, updateType, updateDate, reasons, urls }));
}
