/**
 * The entitlement index: every DOI with a live holding and its holdings, in memory, following the store
 * (docs/design.md, "The holdings index"). Its table (records in an arena of segments, slots), the values and the
 * link sets they share, and its builds, on this thread or a worker.
 */

export { type RecordView, recordView } from './arena-record.ts';
export { type BuildEvents, type BuiltIndex, type IndexBuilder, workerBuilder } from './background-build.ts';
export { HoldingsIndex } from './holdings-index.ts';
export { ACCESS, type IndexedHolding, type OpenPart, openPart, openPartOf } from './index-value.ts';
