export { applyOrder } from './apply-order.ts';
export {
  type DepositPath,
  fileNameProblem,
  isHiddenOrTemp,
  keyLengthProblem,
  parseDepositPath,
  undecodableNameFault,
  unsafeKeyFault,
  unsafeKeyPart,
} from './file-name.ts';
export {
  MAX_LINE_BYTES,
  MAX_RECORDS_PER_FILE,
  type ParsedDeposit,
  type ParsedRecord,
  type ParseOptions,
  parseDepositFile,
  parseDepositText,
  parseRecordLine,
  type RejectedLine,
} from './parse.ts';
export { mostRawBytes, rawSizeFault } from './raw-size.ts';
export * from './schema.ts';
