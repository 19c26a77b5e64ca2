import { plainDoiKey } from './plain.ts';
import { type DoiProblem, doiKey, readDoiForm } from './rules.ts';

/**
 * A DOI as an API caller sent it: its key and bare form, or why it is not a DOI. `plain`: it is a plain DOI
 * (printable ASCII, no quote or backslash), so it goes into JSON as it is.
 */
export type DoiInput = { key: string; bare: string; plain: boolean; problem?: undefined } | { problem: DoiProblem };

/**
 * Reads a DOI sent to an API in any accepted form (bare, `doi:`, `https://doi.org/`): the plain fast path
 * (plain.ts) first, then the general rule.
 */
export function readDoiInput(sent: string): DoiInput {
  const plain = plainDoiKey(sent);
  if (plain !== undefined) return { key: plain, bare: sent, plain: true };
  const form = readDoiForm(sent);
  return form.problem !== undefined ? form : { key: doiKey(form.bare), bare: form.bare, plain: false };
}
