export { doiProblem, doiKey, readDoiForm, MAX_DOI_BYTES, type DoiForm, type DoiProblem } from './rules.ts';
export {
  plainDoiKey,
  copyPlainDoi,
  plainDoiHash,
  plainDoiHashOfChecked,
  isPlainByte,
  foldedHash,
  foldedHashStep,
  foldedHashEnd,
  FOLDED_HASH_SEED,
  foldByte,
  NOT_PLAIN,
} from './plain.ts';
export { readDoiInput, type DoiInput } from './input.ts';
