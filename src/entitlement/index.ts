export { Entitlements } from './entitlements.ts';
export { EntitlementService, type AskedDoi } from './service.ts';
export { ACCESS, HoldingsIndex, valueEnd, type IndexedHolding, type OpenPart } from './holdings-index.ts';
export type { PlatformClient, CallOutcome } from './platform-client.ts';
export { LATENCY_BUCKETS } from './latency-histogram.ts';
export { orgProblem, usedOrg } from './org.ts';
export type { PlatformVerdict } from './verdict.ts';
export * from './schemas.ts';
