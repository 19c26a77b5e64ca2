export * from './schema.ts';
export {
  parseDepositPath,
  fileNameProblem,
  isHiddenOrTemp,
  keyLengthProblem,
  undecodableNameFault,
  unsafeKeyFault,
  unsafeKeyPart,
  type DepositPath,
} from './file-name.ts';
export {
  parseDepositFile,
  parseDepositText,
  parseRecordLine,
  MAX_LINE_BYTES,
  MAX_RECORDS_PER_FILE,
  type ParsedDeposit,
  type ParsedRecord,
  type RejectedLine,
  type ParseOptions,
} from './parse.ts';
export { applyOrder } from './apply-order.ts';
export { mostRawBytes, rawSizeFault } from './raw-size.ts';
