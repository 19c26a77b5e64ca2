export { type DoiInput, readDoiInput } from './input.ts';
export {
  copyPlainDoi,
  FOLDED_HASH_SEED,
  foldByte,
  foldedHash,
  foldedHashEnd,
  foldedHashStep,
  isPlainByte,
  NOT_PLAIN,
  plainDoiHash,
  plainDoiHashOfChecked,
  plainDoiKey,
} from './plain.ts';
export {
  type DoiForm,
  type DoiProblem,
  doiKey,
  doiProblem,
  MAX_DOI_BYTES,
  MAX_DOIS_PER_REQUEST,
  readDoiForm,
} from './rules.ts';
