export { doiKeysOfRecords, type EncodedRecords, encodeRecords, RecordCursor } from './encoded-records.ts';
export {
  ACCESS_CODES,
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
  liveAccessCode,
  sameState,
  writeLive,
  writeTombstone,
} from './holding-codec.ts';
export { StoredHolding } from './holding-json.ts';
export { type HoldingFilter, holdingEntries, splitHoldingKey } from './holding-key.ts';
