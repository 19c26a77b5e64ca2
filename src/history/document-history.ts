import {
  changedParts,
  type HoldingEvent,
  type HoldingView,
  recordKey,
  type Store,
  type UpdatesEntry,
  workNotices,
} from '../store/index.ts';
import { compareSourceDates, type UpdateObject, updateIdentity } from '../updates/index.ts';
import { documentStatus } from './document-status.ts';
import { updateTypeLabel } from './labels.ts';
import type { CurrentHolding, DocumentHistory, HistoryEvent, HoldingChangeEvent, NoticeEvent } from './schema.ts';

/** The history of the DOI with key `doiKey` from one store (two reads), or undefined when nothing is known of it. */
export function historyOf(store: Store, doiKey: string): DocumentHistory | undefined {
  return documentHistory(doiKey, store.holdingsOf(doiKey), store.updatesOf(doiKey));
}

/**
 * Every holding change per platform and every update notice, newest first, with the status badge. Notices a
 * source no longer lists are kept, marked `withdrawn`; notices of a Retraction Watch record that now has another
 * nature are kept, marked `reclassified` (docs/design.md, "One update per notice"). Neither counts for the status.
 */
export function documentHistory(
  doiKey: string,
  holdings: readonly HoldingView[],
  updates: UpdatesEntry | undefined,
): DocumentHistory | undefined {
  if (holdings.length === 0 && !updates) return undefined;
  const notices = workNotices(updates);
  const served = notices.served;
  const events: HistoryEvent[] = [
    ...served.map((u) => noticeEvent(u)),
    ...notices.reclassified.map(({ notice, now }) => noticeEvent(notice, now)),
    ...withdrawnNotices(updates, notices.currentOfRecord),
  ];
  for (const h of holdings) for (const e of h.events) events.push(holdingEvent(h.platform, e));
  // oldest first, stable (a platform's own order is kept for equal dates), then reversed: newest first
  events.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)).reverse();
  return {
    doi: holdings.find((h) => h.state)?.state?.doi ?? updates?.doi ?? doiKey,
    status: documentStatus(served),
    holdings: holdings.map(currentHolding),
    events,
  };
}

/** A notice as the timeline shows it; `now`: the notice its record stands for since it was re-classified. */
function noticeEvent(u: UpdateObject, now?: UpdateObject): NoticeEvent {
  return {
    kind: 'notice',
    date: u.updateDate,
    updateType: u.updateType,
    label: updateTypeLabel(u.updateType),
    source: u.source,
    noticeDoi: u.updateDoi,
    reasons: u.reasons,
    urls: u.urls,
    ...(now ? { reclassified: reclassifiedAs(now) } : {}),
  };
}

function reclassifiedAs(now: UpdateObject): NonNullable<NoticeEvent['reclassified']> {
  return { updateType: now.updateType, label: updateTypeLabel(now.updateType), date: now.updateDate };
}

/**
 * Notices whose last event is a withdrawal and that no stored copy answers now (the same identity, or the same
 * Record ID and type: another feed's copy of the notice, servedUpdates): only what the event kept of them. One
 * whose record is served now with another nature, dated the same or later, was re-classified, not dropped: it is
 * marked so.
 */
function withdrawnNotices(
  entry: UpdatesEntry | undefined,
  currentOfRecord: ReadonlyMap<string, UpdateObject>,
): NoticeEvent[] {
  if (!entry) return [];
  const live = new Set(
    entry.updates.flatMap((u) => [
      updateIdentity(u),
      ...(u.recordId === undefined ? [] : [natureKey(u.source, u.recordId, u.updateType)]),
    ]),
  );
  const last = new Map<string, UpdatesEntry['events'][number]>();
  for (const e of entry.events) last.set(updateIdentity(e), e);
  const out: NoticeEvent[] = [];
  for (const [id, e] of last) {
    if (
      e.kind !== 'withdrawn' ||
      live.has(id) ||
      (e.recordId !== undefined && live.has(natureKey(e.source, e.recordId, e.updateType)))
    )
      continue;
    const now =
      e.recordId === undefined ? undefined : currentOfRecord.get(recordKey({ source: e.source, recordId: e.recordId }));
    // a record asserted now with another nature dated before the withdrawn one was not re-classified into it: a
    // feed dropped its record, and another feed's older assertion is what is left
    const base: NoticeEvent = {
      kind: 'notice',
      date: e.time,
      updateType: e.updateType,
      label: updateTypeLabel(e.updateType),
      source: e.source,
      noticeDoi: e.updateDoi,
      reasons: [],
      urls: [],
    };
    out.push(
      now && compareSourceDates(now.updateDate, e.time) >= 0
        ? { ...base, reclassified: reclassifiedAs(now) }
        : { ...base, withdrawn: true },
    );
  }
  return out;
}

/** A notice as Retraction Watch names it: its Record ID, with the type (a record whose nature changed is another notice). */
function natureKey(source: string, recordId: string, updateType: string): string {
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
      return {
        kind: 'holding',
        date,
        platform,
        change: 'changed',
        ...access('accessType', e.newAccess),
        ...access('previousAccessType', e.oldAccess),
        changed: changedParts(e) ?? [],
      };
    }
  }
}

function access<K extends 'accessType' | 'previousAccessType'>(
  key: K,
  value: HoldingEvent['newAccess'],
): Partial<Record<K, NonNullable<HoldingEvent['newAccess']>>> {
  return value ? ({ [key]: value } as Record<K, NonNullable<HoldingEvent['newAccess']>>) : {};
}

function currentHolding(h: HoldingView): CurrentHolding {
  return h.live && h.state?.accessType
    ? { platform: h.platform, held: true, accessType: h.state.accessType }
    : { platform: h.platform, held: h.live };
}
