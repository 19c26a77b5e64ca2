export { crossrefHeaders, crossrefUserAgent, parseRetryAfter } from './polite.ts';
export { parseInterval, RateGate } from './rate-gate.ts';
