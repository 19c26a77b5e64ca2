import type { Registry } from 'prom-client';
import { familyOf, type Sample } from './registry.ts';

/** What the rate limits count (http/limits/): requests refused per integrator and limit. */
interface LimitCounts {
  readonly refused: ReadonlyMap<string, Readonly<Record<string, number>>>;
}

/** The rate limits' families of /metrics (docs/operations.md, "Rate limits"); `readers`: the status page's limit. */
export function registerLimitMetrics(
  registry: Registry,
  integrators: LimitCounts,
  readers?: { readonly refused: number; readonly size: number },
): void {
  const family = familyOf(registry);
  if (readers) {
    family(
      'doi_holdings_status_page_rate_limited_total',
      'counter',
      'Status page requests refused (429) by the limit per client address ([statusPage] rateLimit).',
      [],
      () => [[{}, readers.refused]],
    );
    family(
      'doi_holdings_status_page_readers',
      'gauge',
      'Client addresses (IPv6: /64 blocks) the status page limit remembers; bounded, the least recently seen forgotten.',
      [],
      () => [[{}, readers.size]],
    );
  }
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
