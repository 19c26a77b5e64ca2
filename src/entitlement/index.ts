export * from './api/index.ts';
export { type AskedDoi, EntitlementService } from './entitlement-service.ts';
export type {
  BuildEvents,
  BuiltIndex,
  IndexBuilder,
  IndexedHolding,
  OpenPart,
  RecordView,
} from './holdings-index/index.ts';
export { ACCESS, HoldingsIndex, openPart, recordView, workerBuilder } from './holdings-index/index.ts';
export { LOOKUP_OUTCOMES, type LookupCount, MetadataLookup } from './lookup/index.ts';
export type { CallOutcome, PlatformClient, PlatformFigures } from './platforms/index.ts';
export { LATENCY_BUCKETS, LatencyHistogram } from './platforms/index.ts';
export { Entitlements } from './platforms-and-stores.ts';
export {
  ASK,
  classifyEntries,
  type Entries,
  INVALID,
  LOOKUP_FAILED,
  LOOKUP_NONE,
  lookUpEntries,
  NO_DOI,
  OPEN,
  releaseEntries,
  takeEntries,
  UNKNOWN,
} from './request-entries.ts';
