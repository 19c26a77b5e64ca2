import { LatencyHistogram } from './latency-histogram.ts';

/** What one call did, for the metrics. */
/** rate_limited: not sent, as the platform's declared rate would not give it a turn before its deadline */
export type CallOutcome = 'ok' | 'error' | 'malformed' | 'timeout' | 'breaker_open' | 'no_slot' | 'rate_limited';

/**
 * A platform's running totals for /metrics. They belong to the platform's name, not to its client: a reload that
 * replaces the client hands them on, since a counter must not go down without a restart (Entitlements).
 */
export class PlatformFigures {
  readonly calls: Record<CallOutcome, number> = {
    ok: 0,
    error: 0,
    malformed: 0,
    timeout: 0,
    breaker_open: 0,
    no_slot: 0,
    rate_limited: 0,
  };
  readonly latency = new LatencyHistogram();
  cacheHits = 0;
  breakerOpens = 0;
}
