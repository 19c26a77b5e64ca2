import type { EnvName } from '../../config/index.ts';
import type { EntitlementService, PlatformClient, PlatformFigures } from '../../entitlement/index.ts';
import { labelText, type Sample, writeFamily } from './store-metrics.ts';

/**
 * The entitlement families of /metrics: per platform its calls by outcome, breaker state, cache hits and a call
 * latency histogram; per environment the answers given by source. The platforms' counts come from `figures`, which
 * outlive a client a reload replaces; the breaker's state from the running client.
 */
export function renderEntitlementMetrics(
  sources: readonly { env: EnvName; entitlement: EntitlementService }[],
  clients: ReadonlyMap<string, PlatformClient>,
  figures: ReadonlyMap<string, PlatformFigures>,
): string {
  const out: string[] = [];
  const platforms = [...clients.values()];
  const counted = [...figures];
  writeFamily(
    out,
    'doi_holdings_entitlement_answers_total',
    'counter',
    'Entitlement Objects answered, by source (none: no platform holds the DOI; invalid: not a DOI).',
    sources.flatMap(({ env, entitlement }) =>
      [...entitlement.answers].map(([source, n]) => [{ env, source }, n] as Sample),
    ),
  );
  writeFamily(
    out,
    'doi_holdings_platform_calls_total',
    'counter',
    "Calls to platforms' Entitlement APIs by outcome (ok, error, malformed, timeout; breaker_open: answered without calling).",
    counted.flatMap(([platform, f]) =>
      Object.entries(f.calls).map(([outcome, n]) => [{ platform, outcome }, n] as Sample),
    ),
  );
  writeFamily(
    out,
    'doi_holdings_platform_breaker_open',
    'gauge',
    'Circuit breaker per platform: 0 closed, 1 open (not calling), 0.5 half-open (one call tests recovery).',
    platforms.map((c) => [{ platform: c.settings.name }, { closed: 0, open: 1, 'half-open': 0.5 }[c.breaker.state]]),
  );
  writeFamily(
    out,
    'doi_holdings_platform_breaker_opens_total',
    'counter',
    'Times the circuit breaker opened.',
    counted.map(([platform, f]) => [{ platform }, f.breakerOpens]),
  );
  writeFamily(
    out,
    'doi_holdings_platform_cache_hits_total',
    'counter',
    'Platform answers served from the answer cache.',
    counted.map(([platform, f]) => [{ platform }, f.cacheHits]),
  );
  writeFamily(
    out,
    'doi_holdings_entitlement_cache_answers',
    'gauge',
    'Platform answers held in the answer cache.',
    sources.map(({ env, entitlement }) => [{ env }, entitlement.cache.size]),
  );
  writeFamily(
    out,
    'doi_holdings_entitlement_cache_bytes',
    'gauge',
    'What the answer cache holds, as counted against [entitlements] cacheMaxBytes (two bytes a character of its strings, 256 an answer).',
    sources.map(({ env, entitlement }) => [{ env }, entitlement.cache.bytes]),
  );
  writeFamily(
    out,
    'doi_holdings_entitlement_index_dois',
    'gauge',
    'DOIs in the in-memory entitlement index: every DOI with a live holding once complete, those read so far while warming.',
    sources.map(({ env, entitlement }) => [{ env }, entitlement.index.size]),
  );
  writeFamily(
    out,
    'doi_holdings_entitlement_index_complete',
    'gauge',
    '1 once the entitlement index holds every DOI; 0 while it is read in the background (lookups read the store meanwhile).',
    sources.map(({ env, entitlement }) => [{ env }, entitlement.index.complete ? 1 : 0]),
  );
  writeFamily(
    out,
    'doi_holdings_entitlement_index_builds_total',
    'counter',
    'Full reads of the store into the entitlement index: 1 at start, then one per batch of files applied by another process.',
    sources.map(({ env, entitlement }) => [{ env }, entitlement.index.builds]),
  );
  out.push(
    "# HELP doi_holdings_platform_call_seconds Latency of calls to platforms' Entitlement APIs.",
    '# TYPE doi_holdings_platform_call_seconds histogram',
  );
  for (const [platform, { latency }] of counted) {
    for (const [le, n] of latency.cumulative())
      out.push(`doi_holdings_platform_call_seconds_bucket${labelText({ platform, le })} ${n}`);
    out.push(`doi_holdings_platform_call_seconds_sum${labelText({ platform })} ${latency.sum}`);
    out.push(`doi_holdings_platform_call_seconds_count${labelText({ platform })} ${latency.count}`);
  }
  return `${out.join('\n')}\n`;
}
