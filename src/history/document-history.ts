import { servedUpdates, type HoldingEvent, type HoldingView, type Store, type UpdatesEntry } from '../store/index.ts';
import { updateIdentity } from '../updates/index.ts';
import { documentStatus } from './document-status.ts';
import { updateTypeLabel } from './labels.ts';
import type { CurrentHolding, DocumentHistory, HistoryEvent, HoldingChangeEvent, NoticeEvent } from './schema.ts';

/** The history of the DOI with key `doiKey` from one store (two reads), or undefined when nothing is known of it. */
export function historyOf(store: Store, doiKey: string): DocumentHistory | undefined {
  return documentHistory(doiKey, store.holdingsOf(doiKey), store.updatesOf(doiKey));
}

/**
 * Every holding change per platform and every update notice, newest first, with the status badge. Notices a
 * source no longer lists are kept, marked `withdrawn`, and do not count for the status.
 */
export function documentHistory(doiKey: string, holdings: readonly HoldingView[], updates: UpdatesEntry | undefined): DocumentHistory | undefined {
  const served = servedUpdates(updates);
  if (holdings.length === 0 && !updates) return undefined;
  const events: HistoryEvent[] = [...served.map(noticeEvent), ...withdrawnNotices(updates)];
  for (const h of holdings) for (const e of h.events) events.push(holdingEvent(h.platform, e));
  // oldest first, stable (a platform's own order is kept for equal dates), then reversed: newest first
  events.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)).reverse();
  return {
    doi: holdings.find((h) => h.state)?.state!.doi ?? updates?.doi ?? doiKey,
    status: documentStatus(served),
    holdings: holdings.map(currentHolding),
    events,
  };
}

function noticeEvent(u: ReturnType<typeof servedUpdates>[number]): NoticeEvent {
  return {
    kind: 'notice',
    date: u.updateDate,
    updateType: u.updateType,
    label: updateTypeLabel(u.updateType),
    source: u.source,
    noticeDoi: u.updateDoi,
    reasons: u.reasons,
    urls: u.urls,
  };
}

/**
 * Notices whose last event is a withdrawal and that no stored copy answers now (the same identity, or the same
 * Record ID and type: another feed's copy of the notice, servedUpdates): only what the event kept of them.
 */
function withdrawnNotices(entry: UpdatesEntry | undefined): NoticeEvent[] {
  if (!entry) return [];
  const live = new Set(entry.updates.flatMap((u) => [updateIdentity(u), ...(u.recordId === undefined ? [] : [recordKey(u.source, u.recordId, u.updateType)])]));
  const last = new Map<string, UpdatesEntry['events'][number]>();
  for (const e of entry.events) last.set(updateIdentity(e), e);
  const out: NoticeEvent[] = [];
  for (const [id, e] of last) {
    if (e.kind !== 'withdrawn' || live.has(id) || (e.recordId !== undefined && live.has(recordKey(e.source, e.recordId, e.updateType)))) continue;
    out.push({ kind: 'notice', date: e.time, updateType: e.updateType, label: updateTypeLabel(e.updateType), source: e.source, noticeDoi: e.updateDoi, reasons: [], urls: [], withdrawn: true });
  }
  return out;
}

/** A notice as Retraction Watch names it: its Record ID, with the type (a record whose nature changed is another notice). */
function recordKey(source: string, recordId: string, updateType: string): string {
  return `${source}\u0000#${recordId}\u0000${updateType}`;
}

function holdingEvent(platform: string, e: HoldingEvent): HoldingChangeEvent {
  const date = new Date(e.time).toISOString();
  switch (e.kind) {
    case 'added':
    case 're-added':
      return { kind: 'holding', date, platform, change: e.kind, ...access('accessType', e.newAccess) };
    case 'removed':
      return { kind: 'holding', date, platform, change: 'removed', ...access('previousAccessType', e.oldAccess) };
    case 'updated': {
      const changed: NonNullable<HoldingChangeEvent['changed']> = e.oldAccess !== e.newAccess ? ['access'] : [];
      changed.push(...(e.changes ?? []));
      return {
        kind: 'holding',
        date,
        platform,
        change: 'changed',
        ...access('accessType', e.newAccess),
        ...access('previousAccessType', e.oldAccess),
        changed,
      };
    }
  }
}

function access<K extends 'accessType' | 'previousAccessType'>(key: K, value: HoldingEvent['newAccess']): Partial<Record<K, NonNullable<HoldingEvent['newAccess']>>> {
  return value ? ({ [key]: value } as Record<K, NonNullable<HoldingEvent['newAccess']>>) : {};
}

function currentHolding(h: HoldingView): CurrentHolding {
  return h.live && h.state?.accessType ? { platform: h.platform, held: true, accessType: h.state.accessType } : { platform: h.platform, held: h.live };
}
