import { doiKey, readDoiForm } from '../../doi/index.ts';
import type { ImportRow, UpdateObject } from '../../update-record/index.ts';
import { fromDateParts, parseSourceDate } from '../../update-record/index.ts';
import { type ImportReport, skip } from './import-report.ts';
import { normaliseUpdateType } from './update-type.ts';

/**
 * Crossref works JSON: a REST response (`{"message": work}` or `{"message": {"items": [...]}}`), a bare work, an
 * array of works, or JSON lines. `update-to` on a notice attaches an update to each target; `updated-by` on a
 * work attaches to the work itself. Crossmark entries carry no reasons, so `reasons` stays empty.
 *
 * A notice speaks only for itself: its `update-to` rows are upserts, so the target's updates from other notices
 * stay. A work's `updated-by` is its whole list: those rows (and a marker row, so an empty list counts) replace
 * what the feed held for the work, and a withdrawn Crossmark update disappears.
 */

interface CrossrefUpdateEntry {
  DOI?: unknown;
  type?: unknown;
  source?: unknown;
  'record-id'?: unknown;
  updated?: CrossrefDate;
}

interface CrossrefDate {
  'date-parts'?: unknown;
  'date-time'?: unknown;
  timestamp?: unknown;
}

export interface CrossrefWork {
  DOI?: unknown;
  /** when the DOI was first registered: tells a work updated long after from its notice (updatedByDates) */
  created?: CrossrefDate;
  'update-to'?: unknown;
  'updated-by'?: unknown;
}

/** Works from any of the accepted shapes; JSON lines are read one line at a time. */
export async function* crossrefWorks(
  chunks: AsyncIterable<Uint8Array | string>,
  report: ImportReport,
): AsyncGenerator<{ work: CrossrefWork; line: number }> {
  const decoder = new TextDecoder();
  let head = '';
  let mode: 'unknown' | 'lines' | 'document' = 'unknown';
  let lineNo = 0;
  for await (const chunk of chunks) {
    const piece = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    head += piece;
    // only a newline can settle it (or a first `[`, which the end settles as well): a document on one line is
    // not scanned again for every chunk
    if (mode === 'unknown' && (piece.includes('\n') || head.length === piece.length)) mode = detectMode(head);
    if (mode !== 'lines') continue;
    let nl: number;
    while ((nl = head.indexOf('\n')) >= 0) {
      lineNo++;
      const line = head.slice(0, nl);
      head = head.slice(nl + 1);
      yield* worksOfLine(line, lineNo, report);
    }
  }
  head += decoder.decode();
  if (mode === 'lines' || detectMode(head) === 'lines') {
    for (const line of head.split('\n')) yield* worksOfLine(line, ++lineNo, report);
    return;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(head.replace(/^\uFEFF/, ''));
  } catch (e) {
    skip(report, 1, 'INVALID_JSON', `not valid JSON: ${(e as Error).message}`);
    return;
  }
  for (const work of worksOf(doc)) yield { work, line: 1 };
}

/** A document whose first value is complete before the first newline (and more follows) is JSON lines. */
function detectMode(text: string): 'unknown' | 'lines' | 'document' {
  const t = text.replace(/^\uFEFF/, '').trimStart();
  if (t === '') return 'unknown';
  if (t[0] === '[') return 'document';
  const nl = t.indexOf('\n');
  if (nl < 0) return 'unknown';
  try {
    JSON.parse(t.slice(0, nl));
    return 'lines';
  } catch {
    return 'document';
  }
}

function* worksOfLine(
  line: string,
  lineNo: number,
  report: ImportReport,
): Generator<{ work: CrossrefWork; line: number }> {
  const t = line.trim();
  if (t === '') return;
  try {
    for (const work of worksOf(JSON.parse(t))) yield { work, line: lineNo };
  } catch (e) {
    report.rows++;
    skip(report, lineNo, 'INVALID_JSON', `line ${lineNo}: not valid JSON: ${(e as Error).message}`);
  }
}

function worksOf(doc: unknown): CrossrefWork[] {
  if (Array.isArray(doc)) return doc.flatMap(worksOf);
  if (!isObject(doc)) return [];
  const message = doc.message;
  if (isObject(message))
    return Array.isArray(message.items) ? (message.items as unknown[]).flatMap(worksOf) : worksOf(message);
  if (Array.isArray(doc.items)) return (doc.items as unknown[]).flatMap(worksOf);
  return [doc as CrossrefWork];
}

/**
 * Every update the works carry, attached to the work it updates. A whole record (complete()) without
 * `updated-by` has no updates: Crossref leaves the field out rather than send an empty list.
 */
export async function* readCrossref(
  chunks: AsyncIterable<Uint8Array | string>,
  report: ImportReport,
): AsyncGenerator<ImportRow> {
  for await (const { work, line } of crossrefWorks(chunks, report))
    yield* rowsOfWork(work, line, report, `line ${line}`, { whole: true });
}

/**
 * The import rows of one work (`line`: where it was read, for messages); counts it in `report`. `whole`: a
 * complete record's missing `updated-by` is an empty list (a file; a harvest page selects some fields only).
 */
export function* rowsOfWork(
  work: CrossrefWork,
  line: number,
  report: ImportReport,
  where = `line ${line}`,
  opts: { whole?: boolean } = {},
): Generator<ImportRow> {
  report.rows++;
  const own = typeof work.DOI === 'string' ? bareDoi(work.DOI) : undefined;
  const { updateTo, updatedBy } = unmirrored(work, own, report, line, where);
  for (const entry of updateTo) {
    // this work is the notice; the entry names the work it updates
    const target = typeof entry.DOI === 'string' ? bareDoi(entry.DOI) : undefined;
    if (!target) {
      skip(report, line, 'BAD_DOI', `${where}: an update-to entry of ${String(work.DOI)} has no usable DOI`);
      continue;
    }
    const u = updateOf(entry, own ?? null, report, line, where);
    if (u) yield { doi: target, update: u, upsert: true, ...recordIdOf(entry) };
  }
  if (!Array.isArray(work['updated-by']) && !(opts.whole && own && complete(work))) return;
  if (!own) {
    if (updatedBy.length > 0)
      skip(report, line, 'BAD_DOI', `${where}: a work with updated-by entries has no usable DOI`);
    return;
  }
  yield { doi: own, update: null };
  for (const entry of updatedBy) {
    const notice = typeof entry.DOI === 'string' ? (bareDoi(entry.DOI) ?? null) : null;
    const u = updateOf(entry, notice, report, line, where);
    if (u) yield { doi: own, update: u, ...recordIdOf(entry) };
  }
}

/**
 * A record as the REST API gives it whole (a `select` leaves these out): only then does a missing `updated-by` say
 * the work has no updates.
 */
function complete(work: CrossrefWork): boolean {
  const w = work as Record<string, unknown>;
  return typeof w.type === 'string' && w.indexed !== undefined;
}

/**
 * A DOI a work names both in `update-to` (it updates that DOI) and in `updated-by` (that DOI updates it) is one
 * relation deposited both ways. Real: a Lancet article lists its own retraction notices in `update-to`, and
 * Crossref copies each `update-to` into the other record's `updated-by`, so the notices carry the mirror too. The
 * work's role decides, from its Retraction Watch entries: one in `updated-by` makes it an updated work (its
 * `updated-by` stands), one in `update-to` a notice (its `update-to` stands); with neither, a work registered long
 * before every date of those relations is the updated work (updatedByDates); else which way is unknown and both
 * sides go (the other record of the pair still says it, if it can). Each entry left out is counted MIRRORED_RELATION.
 */
function unmirrored(work: CrossrefWork, own: string | undefined, report: ImportReport, line: number, where: string) {
  const [to, by] = [entries(work['update-to']), entries(work['updated-by'])];
  const keyOf = (e: CrossrefUpdateEntry) => {
    const doi = typeof e.DOI === 'string' ? bareDoi(e.DOI) : undefined;
    return doi === undefined ? undefined : doiKey(doi);
  };
  const both = new Set(to.map(keyOf).filter((k) => k !== undefined && by.some((e) => keyOf(e) === k)));
  if (both.size === 0) return { updateTo: to, updatedBy: by };
  const fromRw = (e: CrossrefUpdateEntry) =>
    typeof e.source === 'string' && e.source.toLowerCase() === 'retraction-watch';
  const mirroredBy = by.filter((e) => both.has(keyOf(e)));
  const role = by.some(fromRw)
    ? 'updated'
    : to.some(fromRw)
      ? 'notice'
      : updatedByDates(work.created, mirroredBy)
        ? 'updated'
        : 'unknown';
  const kept = {
    updateTo: to.filter((e) => !both.has(keyOf(e)) || role === 'notice'),
    updatedBy: by.filter((e) => !both.has(keyOf(e)) || role === 'updated'),
  };
  for (const e of [...to, ...by]) {
    if (kept.updateTo.includes(e) || kept.updatedBy.includes(e)) continue;
    const side = to.includes(e) ? 'update-to' : 'updated-by';
    skip(
      report,
      line,
      'MIRRORED_RELATION',
      `${where}: ${own ?? String(work.DOI)} names ${String(e.DOI)} both as updating it and as updated by it; its ${side} entry is left out`,
    );
  }
  return kept;
}

/** a work registered more than this before every date of its relations is the updated work, not the notice */
const NOTICE_MARGIN_DAYS = 14;

/**
 * Whether a work is the updated one in relations deposited both ways, where no Retraction Watch entry settles it:
 * registered more than NOTICE_MARGIN_DAYS before the date of every mirrored `updated-by` entry. On an updated work
 * those are the notices' own deposits (Crossref's mirror of their `update-to`), dated as the notices; its own
 * wrong-way `update-to` may carry any date (the Lancet article's carry its own). Then its `updated-by` stands, and
 * a relation a publisher deposited on both records (each then names the other both ways) is not lost. Only this
 * side is decided by dates: a record registered near or after those dates may be the notice, or a pair deposited
 * years later; its sides go, and the update stands on the updated work's record.
 */
function updatedByDates(created: CrossrefDate | undefined, mirroredBy: CrossrefUpdateEntry[]): boolean {
  const registered = dateOf(created);
  const dated = mirroredBy.map((e) => dateOf(e.updated));
  if (!registered || dated.length === 0 || dated.some((d) => d === undefined)) return false;
  return dayRange(registered)[1] + NOTICE_MARGIN_DAYS < Math.min(...dated.map((d) => dayRange(d!)[0]));
}

/** The first and last day (days since 1970) an ISO date of any precision (YYYY, YYYY-MM, YYYY-MM-DD) covers. */
function dayRange(iso: string): [number, number] {
  const [y, m, d] = iso.split('-').map(Number) as [number, number?, number?];
  const day = (yy: number, mm: number, dd: number) => Date.UTC(yy, mm - 1, dd) / 86_400_000;
  if (d !== undefined) return [day(y, m!, d), day(y, m!, d)];
  if (m !== undefined) return [day(y, m, 1), day(y, m + 1, 0)];
  return [day(y, 1, 1), day(y, 12, 31)];
}

/** A Crossref date object (date-parts, else date-time, else timestamp) as ISO at its precision. */
function dateOf(u: CrossrefDate | undefined): string | undefined {
  return (
    fromDateParts(u?.['date-parts']) ??
    (typeof u?.['date-time'] === 'string' ? parseSourceDate(u['date-time'].slice(0, 10)) : undefined) ??
    (typeof u?.timestamp === 'number' && Number.isFinite(new Date(u.timestamp).getTime())
      ? new Date(u.timestamp).toISOString().slice(0, 10)
      : undefined)
  );
}

/** Retraction Watch's record number on an entry whose source is Retraction Watch. */
function recordIdOf(entry: CrossrefUpdateEntry): { recordId?: string } {
  const id = entry['record-id'];
  if (typeof entry.source !== 'string' || entry.source.toLowerCase() !== 'retraction-watch') return {};
  return typeof id === 'string' && id.trim() !== ''
    ? { recordId: id.trim() }
    : typeof id === 'number'
      ? { recordId: String(id) }
      : {};
}

function updateOf(
  entry: CrossrefUpdateEntry,
  updateDoi: string | null,
  report: ImportReport,
  line: number,
  where: string,
): UpdateObject | undefined {
  const type = typeof entry.type === 'string' ? normaliseUpdateType(entry.type) : '';
  if (!type) {
    skip(report, line, 'NO_UPDATE_TYPE', `${where}: an update entry has no type`);
    return undefined;
  }
  const date = dateOf(entry.updated);
  if (!date) {
    skip(report, line, 'BAD_DATE', `${where}: the ${type} entry has no usable updated date`);
    return undefined;
  }
  report.used++;
  const source =
    typeof entry.source === 'string' && entry.source.toLowerCase() === 'retraction-watch'
      ? 'retraction-watch'
      : 'crossref';
  return {
    updateDoi,
    source,
    updateType: type,
    updateDate: date,
    reasons: [],
    urls: updateDoi ? [`https://doi.org/${updateDoi}`] : [],
  };
}

function entries(v: unknown): CrossrefUpdateEntry[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

function bareDoi(raw: string): string | undefined {
  const form = readDoiForm(raw);
  return form.problem === undefined ? form.bare : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
