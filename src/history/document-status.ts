import type { UpdateObject } from '../updates/index.ts';
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

const STATES: Record<StatusCode, { label: string; tone: DocumentStatus['tone']; severity: number; reverses?: true }> = {
  retracted: { label: 'Retracted', tone: 'alert', severity: 6 },
  withdrawn: { label: 'Withdrawn', tone: 'caution', severity: 5 },
  partial_retraction: { label: 'Partial retraction', tone: 'caution', severity: 4 },
  expression_of_concern: { label: 'Expression of concern', tone: 'caution', severity: 3 },
  replaced: { label: 'Replaced', tone: 'caution', severity: 2, reverses: true },
  corrected: { label: 'Corrected', tone: 'caution', severity: 2 },
  reinstated: { label: 'Reinstated', tone: 'neutral', severity: 2, reverses: true },
  updated: { label: 'Updated', tone: 'neutral', severity: 1 },
  none: { label: 'No known updates', tone: 'neutral', severity: 0 },
};

/** The state one notice stands for; undefined for notices that decide nothing (addendum, new version, ...). */
export function stateOfNotice(u: Pick<UpdateObject, 'updateType' | 'reasons'>): StatusCode | undefined {
  switch (u.updateType) {
    case 'retraction':
      return isRetractAndReplace(u.reasons) ? 'replaced' : 'retracted';
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

/** The document's status from the notices its sources list now (withdrawn notices are not passed in). */
export function documentStatus(notices: readonly UpdateObject[]): DocumentStatus {
  if (notices.length === 0) return statusOf('none');
  let code: StatusCode = 'updated';
  let decidedBy: UpdateObject | undefined;
  for (const { u, state } of inDecidingOrder(notices)) {
    if (!state) continue;
    if (STATES[state].reverses || STATES[state].severity >= STATES[code].severity) {
      code = state;
      decidedBy = u;
    }
  }
  const latest = decidedBy ?? inDecidingOrder(notices).at(-1)!.u;
  return { ...statusOf(code), date: latest.updateDate, source: latest.source };
}

/**
 * Oldest first; on the same date the less severe first and reversals last, so "retracted and reinstated on one
 * day" ends reinstated and "concern and retraction on one day" ends retracted.
 */
function inDecidingOrder(notices: readonly UpdateObject[]): { u: UpdateObject; state: StatusCode | undefined }[] {
  const rank = (s: StatusCode | undefined) => (s === undefined ? 0 : STATES[s].reverses ? 100 : STATES[s].severity);
  return notices
    .map((u) => ({ u, state: stateOfNotice(u) }))
    .sort((a, b) => (a.u.updateDate < b.u.updateDate ? -1 : a.u.updateDate > b.u.updateDate ? 1 : rank(a.state) - rank(b.state)));
}

function statusOf(code: StatusCode): DocumentStatus {
  const { label, tone } = STATES[code];
  return { code, label, tone };
}
