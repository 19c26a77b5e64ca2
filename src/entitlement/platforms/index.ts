export { LATENCY_BUCKETS, LatencyHistogram } from './latency-histogram.ts';
export { PlatformClient, TIMED_OUT, verdictOf } from './platform-client.ts';
export { type CallOutcome, PlatformFigures } from './platform-figures.ts';
