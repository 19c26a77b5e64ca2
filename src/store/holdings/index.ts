export { ByteReader, ByteWriter, sameBytes } from './bytes.ts';
export { doiKeysOfRecords, encodeRecords, RecordCursor, type EncodedRecords } from './encoded-records.ts';
export {
  decodeHolding,
  decodeLive,
  decodeState,
  isLive,
  layoutOf,
  sameState,
  writeLive,
  writeTombstone,
  type EventKind,
  type HoldingEvent,
  type HoldingState,
  type HoldingView,
  type LiveHolding,
} from './holding-codec.ts';
export { JsonBytes, StoredHolding } from './holding-json.ts';
export { holdingEntries, splitHoldingKey, type HoldingFilter } from './holding-key.ts';
