import type { Registry } from 'prom-client';
import { familyOf, type Sample } from './registry.ts';

/** What the rate limits count (http/limits/): requests refused per integrator and limit. */
interface LimitCounts {
  readonly refused: ReadonlyMap<string, Readonly<Record<string, number>>>;
}

/** The rate limits' families of /metrics (docs/operations.md, "Rate limits"). */
export function registerLimitMetrics(registry: Registry, integrators: LimitCounts): void {
  const family = familyOf(registry);
  family(
    'doi_holdings_entitlement_rate_limited_total',
    'counter',
    "Entitlement API requests refused by their integrator's rate limit (requests, dois: 429; doi_burst: 400, more DOIs than the DOI burst).",
    ['integrator', 'limit'],
    () =>
      [...integrators.refused].flatMap(([integrator, counts]) =>
        Object.entries(counts).map(([limit, n]) => [{ integrator, limit }, n] as Sample),
      ),
  );
}
