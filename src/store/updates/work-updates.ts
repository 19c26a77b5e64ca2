import { compareSourceDates, updateIdentity as identity, type UpdateObject } from '../../update-record/index.ts';

/**
 * Update information per work (docs/design.md, "Update information"), in the `updates` sub-database keyed by DOI key.
 * Each stored update remembers the import feed (`origin`) it came from, so re-importing a feed replaces only
 * that feed's entries. Every change is also an event in the work's entry (time = the update's own date).
 */

export interface StoredUpdate extends UpdateObject {
  origin: string;
  /** Retraction Watch's Record ID, when the source gives it: never served, it joins feeds (servedUpdates) */
  recordId?: string;
}

/** An update as an import hands it to the store. */
export type IncomingUpdate = UpdateObject & { recordId?: string };

type UpdateEventKind = 'added' | 'changed' | 'withdrawn';

export interface UpdateEvent {
  kind: UpdateEventKind;
  /** the update's date (ISO at the source's precision), never the wall clock */
  time: string;
  source: string;
  updateType: string;
  updateDoi: string | null;
  /** the Retraction Watch Record ID of the copy, when it has one: a withdrawal another feed's copy still answers is not shown */
  recordId?: string;
}

export interface UpdatesEntry {
  /** the work's DOI as the source gave it */
  doi: string;
  updates: StoredUpdate[];
  events: UpdateEvent[];
  /** the work's place in the change feed (change-feed.ts): the sequence number of its latest served change */
  changeSeq?: number;
}

export interface WorkUpdates {
  doi: string;
  updates: IncomingUpdate[];
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
 * a later one in `incoming` wins); `before` itself when nothing changed. `upsert`: `incoming` speaks only for its
 * own updates, so the feed's other updates of the work stay.
 */
export function mergeWork(
  before: UpdatesEntry | undefined,
  incoming: WorkUpdates | undefined,
  origin: string,
  report: ReplaceReport,
  upsert = false,
): UpdatesEntry | undefined {
  const kept = (before?.updates ?? []).filter((u) => u.origin !== origin);
  const old = new Map((before?.updates ?? []).filter((u) => u.origin === origin).map((u) => [identity(u), u]));
  const fresh = new Map<string, StoredUpdate>(upsert ? old : []);
  for (const u of incoming?.updates ?? []) fresh.set(identity(u), storedOf(u, origin));
  // a copy without a notice DOI stored before its Record ID was known is the same notice as the row that names it
  for (const [id, u] of fresh) {
    const unnamed =
      u.recordId !== undefined && u.updateDoi === null ? identity({ ...u, recordId: undefined }) : undefined;
    if (
      unnamed !== undefined &&
      !old.has(id) &&
      old.get(unnamed)?.recordId === undefined &&
      old.has(unnamed) &&
      !fresh.has(unnamed)
    ) {
      old.set(id, old.get(unnamed)!);
      old.delete(unnamed);
    }
  }
  const events: UpdateEvent[] = [];
  let silent = false;
  for (const [id, u] of fresh) {
    const prev = old.get(id);
    if (!prev) {
      events.push(eventOf('added', u));
      report.updatesAdded++;
    } else if (!sameUpdate(prev, u)) {
      events.push(eventOf('changed', u));
      report.updatesChanged++;
    } else {
      report.updatesUnchanged++;
      // a Record ID learnt later is kept without an event: nothing a reader sees has changed
      if (prev.recordId !== u.recordId && u.recordId !== undefined) silent = true;
    }
  }
  for (const [id, u] of old) {
    if (fresh.has(id)) continue;
    events.push(eventOf('withdrawn', u));
    report.updatesWithdrawn++;
  }
  // the feed's order is kept: on a tie of dates it says which of a record's assertions is its nature (recordNatures)
  if (!silent && events.length === 0 && !sameOrder([...old.keys()], [...fresh.keys()])) silent = true;
  if (events.length === 0 && !silent) return before;
  const updates = [...kept, ...fresh.values()];
  if (updates.length === 0 && !before) return undefined;
  return { doi: incoming?.doi ?? before!.doi, updates, events: [...(before?.events ?? []), ...events] };
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function storedOf(u: IncomingUpdate, origin: string): StoredUpdate {
  const { updateDoi, source, updateType, updateDate, reasons, urls, recordId } = u;
  return {
    updateDoi,
    source,
    updateType,
    updateDate,
    reasons,
    urls,
    origin,
    ...(recordId !== undefined ? { recordId } : {}),
  };
}

function eventOf(kind: UpdateEventKind, u: StoredUpdate): UpdateEvent {
  const e: UpdateEvent = {
    kind,
    time: u.updateDate,
    source: u.source,
    updateType: u.updateType,
    updateDoi: u.updateDoi,
  };
  if (u.recordId !== undefined) e.recordId = u.recordId;
  return e;
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
 * What the APIs serve for a work: one update per notice across feeds, oldest `updateDate` first. Updates are one
 * notice when they share a Retraction Watch Record ID, or else (source, updateDoi, updateType). A notice known to
 * several feeds is served from the fullest (most reasons and links), with a missing notice DOI or reasons filled in
 * from the others (a Crossref feed's notice DOI first) and the links of all (docs/design.md, "One update per notice").
 * Assertions of a Retraction Watch record that its current nature superseded are not served (recordNatures).
 */
export function servedUpdates(entry: UpdatesEntry | undefined): UpdateObject[] {
  if (!entry) return [];
  // one update has no other to supersede it (most works: this path is every index build's)
  const superseded = entry.updates.length < 2 ? undefined : recordNatures(entry.updates).superseded;
  return noticeGroups(standingOf(entry.updates, superseded)).map(mergeNotice).sort(servedOrder);
}

/** The updates their records' natures did not supersede. */
function standingOf(updates: StoredUpdate[], superseded: ReadonlySet<StoredUpdate> | undefined): StoredUpdate[] {
  return !superseded?.size ? updates : updates.filter((u) => !superseded.has(u));
}

/** A notice Retraction Watch re-classified: what was asserted, and the notice its record stands for now. */
export interface ReclassifiedNotice {
  notice: UpdateObject;
  now: UpdateObject;
}

interface WorkNotices {
  /** what the APIs serve (servedUpdates) */
  served: UpdateObject[];
  /** assertions of another nature than their record's current one, one per notice: shown as replaced, never served */
  reclassified: ReclassifiedNotice[];
  /** per Retraction Watch record (recordKey) the work has: the notice served for its current nature */
  currentOfRecord: Map<string, UpdateObject>;
}

/**
 * The work's notices: those served (as servedUpdates), and those its records' current natures superseded, which
 * the status page shows as replaced.
 */
export function workNotices(entry: UpdatesEntry | undefined): WorkNotices {
  if (!entry) return { served: [], reclassified: [], currentOfRecord: new Map() };
  const natures = recordNatures(entry.updates);
  const groups = noticeGroups(standingOf(entry.updates, natures.superseded));
  const served = groups.map(mergeNotice);
  const noticeOf = new Map<StoredUpdate, UpdateObject>();
  groups.forEach((group, i) => group.forEach((u) => noticeOf.set(u, served[i]!)));
  served.sort(servedOrder);
  const currentOfRecord = new Map([...natures.current].map(([key, u]) => [key, noticeOf.get(u)!]));
  const otherNature = entry.updates.filter(
    (u) => natures.superseded.has(u) && u.updateType !== natures.current.get(recordKey(u))!.updateType,
  );
  const reclassified = noticeGroups(otherNature).map((group) => ({
    notice: mergeNotice(group),
    now: currentOfRecord.get(recordKey(group[0]!))!,
  }));
  return { served, reclassified, currentOfRecord };
}

function servedOrder(a: UpdateObject, b: UpdateObject): number {
  return compareText(a.updateDate, b.updateDate) || compareText(identity(a), identity(b));
}

/** The feed whose records they are: the Retraction Watch database's CSV speaks for its own records' natures. */
const RECORDS_FEED = 'retraction-watch-csv';

/** A Retraction Watch record as feeds name it: its source and Record ID (its nature aside). */
export function recordKey(u: { source: string; recordId?: string }): string {
  return `${u.source}\u0000${u.recordId}`;
}

/**
 * One Retraction Watch record, one current nature (docs/design.md, "One update per notice"). Crossref does not
 * replace its relay of a record whose nature changed: it appends another entry with the same Record ID and keeps
 * the old one. Within a feed, a record's latest assertion (by date; on a tie, the later in the feed's order)
 * stands and the earlier ones are superseded. Across feeds, the CSV's assertion is the record's nature when the
 * CSV lists it, else the latest feed's (on a tie, the feed named last); assertions of another nature are
 * superseded. `current`: per record, the assertion that decided its nature.
 */
function recordNatures(updates: readonly StoredUpdate[]): {
  superseded: Set<StoredUpdate>;
  current: Map<string, StoredUpdate>;
} {
  const superseded = new Set<StoredUpdate>();
  const current = new Map<string, StoredUpdate>();
  const byRecord = new Map<string, StoredUpdate[]>();
  for (const u of updates) {
    if (u.recordId === undefined) continue;
    const key = recordKey(u);
    const copies = byRecord.get(key);
    if (copies) copies.push(u);
    else byRecord.set(key, [u]);
  }
  for (const [key, copies] of byRecord) {
    if (copies.length === 1) {
      current.set(key, copies[0]!);
      continue;
    }
    const latestOfFeed = new Map<string, StoredUpdate>();
    for (const u of copies) {
      const latest = latestOfFeed.get(u.origin);
      if (!latest || compareSourceDates(u.updateDate, latest.updateDate) >= 0) latestOfFeed.set(u.origin, u);
    }
    const byFeed = [...latestOfFeed.values()].sort((a, b) => compareText(a.origin, b.origin));
    const decider =
      latestOfFeed.get(RECORDS_FEED) ??
      byFeed.reduce((a, b) => (compareSourceDates(b.updateDate, a.updateDate) >= 0 ? b : a));
    current.set(key, decider);
    for (const u of copies)
      if (latestOfFeed.get(u.origin) !== u || u.updateType !== decider.updateType) superseded.add(u);
  }
  return { superseded, current };
}

/**
 * The stored updates grouped by notice. Copies with one identity are one notice; then copies of one type that feeds
 * carry under one Retraction Watch Record ID join, unless that would put two updates of one feed with different identities in
 * one notice (within a feed the identity decides, as it did when the feed was imported). Record IDs and copies are
 * taken in a fixed order, so the grouping does not depend on the order the copies are stored in.
 */
function noticeGroups(updates: readonly StoredUpdate[]): StoredUpdate[][] {
  if (updates.length <= 1) return updates.length === 0 ? [] : [[updates[0]!]];
  const ids = updates.map(identity);
  const parent = updates.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const feeds = updates.map((u, i) => new Map([[u.origin, ids[i]!]])); // per notice (at its root): each feed's identity
  const join = (a: number, b: number): void => {
    const [ra, rb] = [root(a), root(b)];
    if (ra === rb) return;
    for (const [origin, id] of feeds[rb]!) if ((feeds[ra]!.get(origin) ?? id) !== id) return;
    for (const [origin, id] of feeds[rb]!) feeds[ra]!.set(origin, id);
    parent[rb] = ra;
  };
  const first = new Map<string, number>();
  ids.forEach((id, i) => (first.has(id) ? join(first.get(id)!, i) : first.set(id, i)));
  const byRecord = new Map<string, number[]>();
  updates.forEach((u, i) => {
    // of one type only: a record whose nature changed (an expression of concern become a retraction) is another
    // notice, and one feed may still carry the old nature while another relays the new
    const key = `${u.source}\u0000${u.recordId}\u0000${u.updateType}`;
    if (u.recordId !== undefined) byRecord.set(key, [...(byRecord.get(key) ?? []), i]);
  });
  const order = (a: number, b: number) =>
    compareText(updates[a]!.origin, updates[b]!.origin) || compareText(ids[a]!, ids[b]!) || a - b;
  for (const key of [...byRecord.keys()].sort()) {
    const copies = byRecord.get(key)!.sort(order);
    for (let i = 0; i < copies.length; i++) for (let j = i + 1; j < copies.length; j++) join(copies[i]!, copies[j]!);
  }
  const groups = new Map<number, StoredUpdate[]>();
  updates.forEach((u, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), u]));
  return [...groups.values()];
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function mergeNotice(group: StoredUpdate[]): UpdateObject {
  let base = group[0]!;
  for (const u of group) if (u.reasons.length + u.urls.length > base.reasons.length + base.urls.length) base = u;
  const { updateDoi, source, updateType, updateDate, reasons, urls } = base;
  if (group.length === 1) return { updateDoi, source, updateType, updateDate, reasons, urls };
  const doiFrom =
    group.find((u) => u.updateDoi !== null && u.origin.startsWith('crossref')) ??
    group.find((u) => u.updateDoi !== null);
  return {
    updateDoi: doiFrom?.updateDoi ?? updateDoi,
    source,
    updateType,
    updateDate,
    reasons: reasons.length > 0 ? reasons : (group.find((u) => u.reasons.length > 0)?.reasons ?? []),
    urls: [...new Set([...urls, ...group.flatMap((u) => u.urls)])],
  };
}
