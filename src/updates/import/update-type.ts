/**
 * updateType values (docs/interface.md, "Where update information comes from"): lower case, `_` for spaces, obvious variants and misspellings mapped,
 * so Retraction Watch's "Expression of concern" and Crossref's "expression_of_concern" are one type.
 */
/** a Map, not an object: a type read from a source (`constructor`, `__proto__`) must not find Object's own members */
const ALIASES = new Map<string, string>(
  Object.entries({
    retracted: 'retraction',
    retraction_notice: 'retraction',
    retration: 'retraction',
    retractions: 'retraction',
    partial_retractions: 'partial_retraction',
    corrected: 'correction',
    corrections: 'correction',
    correcton: 'correction',
    corrigenda: 'corrigendum',
    errata: 'erratum',
    errratum: 'erratum',
    expression_of_concerns: 'expression_of_concern',
    expressions_of_concern: 'expression_of_concern',
    eoc: 'expression_of_concern',
    withdrawn: 'withdrawal',
    withdrawl: 'withdrawal',
    removed: 'removal',
    addenda: 'addendum',
    clarifications: 'clarification',
    newversion: 'new_version',
    new_edition_of: 'new_edition',
    reinstated: 'reinstatement',
    reinstatment: 'reinstatement',
  }),
);

export function normaliseUpdateType(raw: string): string {
  const base = raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
    .replace(/[^a-z0-9_]/g, '')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  return ALIASES.get(base) ?? base;
}
