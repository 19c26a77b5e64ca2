import { compareSourceDates, type UpdateObject } from '../updates/index.ts';
import type { DocumentStatus, StatusCode } from './schema.ts';

/**
 * The status badge of a document from its update notices: the one rule the page and its JSON share. Known harms
 * it avoids (docs/interface.md, "Document status page"): a correction or an expression of concern shown as a
 * retraction, and a retraction that was reversed (a reinstatement, a retract-and-replace) still shown as
 * "Retracted".
 *
 * Notices are read oldest first. A notice that reverses (reinstatement, retract-and-replace) always sets the
 * state; any other decisive notice sets it only when it is at least as severe as the state it finds, so a
 * correction of a retraction notice leaves the document retracted.
 */

/** severity: the order of the interface's badge table, most serious first (Replaced above Corrected) */
const STATES: Record<StatusCode, { label: string; tone: DocumentStatus['tone']; severity: number; reverses?: true }> = {
  retracted: { label: 'Retracted', tone: 'alert', severity: 7 },
  withdrawn: { label: 'Withdrawn', tone: 'caution', severity: 6 },
  partial_retraction: { label: 'Partial retraction', tone: 'caution', severity: 5 },
  expression_of_concern: { label: 'Expression of concern', tone: 'caution', severity: 4 },
  replaced: { label: 'Replaced', tone: 'caution', severity: 3, reverses: true },
  corrected: { label: 'Corrected', tone: 'caution', severity: 2 },
  reinstated: { label: 'Reinstated', tone: 'neutral', severity: 2, reverses: true },
  updated: { label: 'Updated', tone: 'neutral', severity: 1 },
  none: { label: 'No known updates', tone: 'neutral', severity: 0 },
};

/**
 * The state one notice stands for; undefined for notices that decide nothing (addendum, new version, ...).
 * `replacedNotices`: notice DOIs some source calls a retract-and-replace (replacedNoticeDois), so another
 * source's copy of the same notice, which gives no reasons (Crossref), reads the same.
 */
export function stateOfNotice(
  u: Pick<UpdateObject, 'updateType' | 'reasons' | 'updateDoi'>,
  replacedNotices?: ReadonlySet<string>,
): StatusCode | undefined {
  switch (u.updateType) {
    case 'retraction':
      return isRetractAndReplace(u.reasons) || (u.updateDoi !== null && replacedNotices?.has(u.updateDoi.toLowerCase()))
        ? 'replaced'
        : 'retracted';
    case 'withdrawal':
    case 'removal':
      return 'withdrawn';
    case 'partial_retraction':
      return 'partial_retraction';
    case 'expression_of_concern':
      return 'expression_of_concern';
    case 'correction':
    case 'corrigendum':
    case 'erratum':
      return 'corrected';
    case 'reinstatement':
      return 'reinstated';
    default:
      return undefined;
  }
}

/** Retraction Watch names a retraction whose article was replaced by a corrected version "Retract and Replace". */
function isRetractAndReplace(reasons: readonly string[]): boolean {
  return reasons.some((r) => /retract(ed)?\s*(and|&)\s*replace/i.test(r));
}

/** The notice DOIs (lower-cased) of retractions whose reasons say retract-and-replace, in any source. */
export function replacedNoticeDois(
  notices: readonly Pick<UpdateObject, 'updateType' | 'reasons' | 'updateDoi'>[],
): Set<string> {
  const out = new Set<string>();
  for (const u of notices)
    if (u.updateType === 'retraction' && u.updateDoi !== null && isRetractAndReplace(u.reasons))
      out.add(u.updateDoi.toLowerCase());
  return out;
}

/** The document's status from the notices its sources list now (withdrawn notices are not passed in). */
export function documentStatus(notices: readonly UpdateObject[]): DocumentStatus {
  if (notices.length === 0) return statusOf('none');
  let code: StatusCode = 'updated';
  let decidedBy: UpdateObject | undefined;
  const ordered = inDecidingOrder(notices, replacedNoticeDois(notices));
  for (const { u, state } of ordered) {
    if (!state) continue;
    if (STATES[state].reverses || STATES[state].severity >= STATES[code].severity) {
      code = state;
      decidedBy = u;
    }
  }
  const latest = decidedBy ?? ordered.at(-1)!.u;
  return { ...statusOf(code), date: latest.updateDate, source: latest.source };
}

/**
 * Oldest first; on the same date the less severe first and reversals last, so "retracted and reinstated on one
 * day" ends reinstated and "concern and retraction on one day" ends retracted. Dates of other precision are the
 * same date when one is within the other (`2020-05` and `2020-05-14`): which came first is not known. That "same"
 * is not transitive (`2020` is both `2020-04` and `2020-05`), so the notices are first put in one fixed order (by
 * date as text, then type and notice DOI): the answer never depends on the order they are passed in.
 */
function inDecidingOrder(
  notices: readonly UpdateObject[],
  replaced: ReadonlySet<string>,
): { u: UpdateObject; state: StatusCode | undefined }[] {
  const rank = (s: StatusCode | undefined) => (s === undefined ? 0 : STATES[s].reverses ? 100 : STATES[s].severity);
  const fixed = (a: UpdateObject, b: UpdateObject) =>
    compareText(a.updateDate, b.updateDate) ||
    compareText(a.updateType, b.updateType) ||
    compareText(a.updateDoi ?? '', b.updateDoi ?? '') ||
    compareText(a.source, b.source);
  return [...notices]
    .sort(fixed)
    .map((u) => ({ u, state: stateOfNotice(u, replaced) }))
    .sort((a, b) => compareSourceDates(a.u.updateDate, b.u.updateDate) || rank(a.state) - rank(b.state));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function statusOf(code: StatusCode): DocumentStatus {
  const { label, tone } = STATES[code];
  return { code, label, tone };
}
