export { Entitlements } from './platforms-and-stores.ts';
export { EntitlementService, type AskedDoi } from './entitlement-service.ts';
export { HoldingsIndex, recordView, ACCESS, openPart, workerBuilder } from './holdings-index/index.ts';
export type {
  RecordView,
  IndexedHolding,
  OpenPart,
  BuiltIndex,
  IndexBuilder,
  BuildEvents,
} from './holdings-index/index.ts';
export type { PlatformClient } from './platforms/index.ts';
export type { CallOutcome, PlatformFigures } from './platforms/index.ts';
export { LATENCY_BUCKETS, LatencyHistogram } from './platforms/index.ts';
export * from './api/index.ts';
