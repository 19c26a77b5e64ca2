export { doiKeysOfRecords, type EncodedRecords, encodeRecords, RecordCursor } from './encoded-records.ts';
export {
  changedParts,
  decodeHolding,
  decodeLive,
  decodeState,
  type EventKind,
  type HoldingChange,
  type HoldingEvent,
  type HoldingState,
  type HoldingView,
  isLive,
  type LiveHolding,
  layoutOf,
  sameState,
  writeLive,
  writeTombstone,
} from './holding-codec.ts';
export { StoredHolding } from './holding-json.ts';
export { type HoldingFilter, holdingEntries, splitHoldingKey } from './holding-key.ts';
