/**
 * The entitlement index: every DOI with a live holding and its holdings, in memory, following the store
 * (docs/design.md, "The holdings index"). Its table (records in an arena of segments, slots), the values and the
 * link sets they share, and its builds, on this thread or a worker.
 */
export { HoldingsIndex } from './holdings-index.ts';
export { recordView, type RecordView } from './arena-record.ts';
export { ACCESS, openPart, openPartOf, type IndexedHolding, type OpenPart } from './index-value.ts';
export { workerBuilder, type BuiltIndex, type IndexBuilder, type BuildEvents } from './background-build.ts';
