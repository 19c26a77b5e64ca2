import type { Registry } from 'prom-client';
import type { EnvName } from '../../config/index.ts';
import type { EntitlementService, PlatformClient, PlatformFigures } from '../../entitlement/index.ts';
import { familyOf, histogram, type Sample } from './registry.ts';

/**
 * The entitlement families of /metrics: per platform its calls by outcome, breaker state, cache hits and a call
 * latency histogram; per environment the answers given by source. The platforms' counts come from `figures`, which
 * outlive a client a reload replaces; the breaker's state from the running client.
 */
export function registerEntitlementMetrics(
  registry: Registry,
  sources: readonly { env: EnvName; entitlement: EntitlementService }[],
  clients: ReadonlyMap<string, PlatformClient>,
  figures: ReadonlyMap<string, PlatformFigures>,
): void {
  const family = familyOf(registry);
  family(
    'doi_holdings_entitlement_answers_total',
    'counter',
    'Entitlement Objects answered, by source (none: no platform holds the DOI; invalid: not a DOI).',
    ['env', 'source'],
    () =>
      sources.flatMap(({ env, entitlement }) =>
        [...entitlement.answers].map(([source, n]) => [{ env, source }, n] as Sample),
      ),
  );
  family(
    'doi_holdings_platform_calls_total',
    'counter',
    "Calls to platforms' Entitlement APIs by outcome (ok, error, malformed, timeout; breaker_open: answered without calling).",
    ['platform', 'outcome'],
    () =>
      [...figures].flatMap(([platform, f]) =>
        Object.entries(f.calls).map(([outcome, n]) => [{ platform, outcome }, n] as Sample),
      ),
  );
  family(
    'doi_holdings_platform_breaker_open',
    'gauge',
    'Circuit breaker per platform: 0 closed, 1 open (not calling), 0.5 half-open (one call tests recovery).',
    ['platform'],
    () =>
      [...clients.values()].map((c) => [
        { platform: c.settings.name },
        { closed: 0, open: 1, 'half-open': 0.5 }[c.breaker.state],
      ]),
  );
  family(
    'doi_holdings_platform_breaker_opens_total',
    'counter',
    'Times the circuit breaker opened.',
    ['platform'],
    () => [...figures].map(([platform, f]) => [{ platform }, f.breakerOpens]),
  );
  family(
    'doi_holdings_platform_cache_hits_total',
    'counter',
    'Platform answers served from the answer cache.',
    ['platform'],
    () => [...figures].map(([platform, f]) => [{ platform }, f.cacheHits]),
  );
  family('doi_holdings_entitlement_cache_answers', 'gauge', 'Platform answers held in the answer cache.', ['env'], () =>
    sources.map(({ env, entitlement }) => [{ env }, entitlement.cache.size]),
  );
  family(
    'doi_holdings_entitlement_cache_bytes',
    'gauge',
    'What the answer cache holds, as counted against [entitlements] cacheMaxBytes (two bytes a character of its strings, 256 an answer).',
    ['env'],
    () => sources.map(({ env, entitlement }) => [{ env }, entitlement.cache.bytes]),
  );
  family(
    'doi_holdings_entitlement_index_dois',
    'gauge',
    'DOIs in the in-memory entitlement index: every DOI with a live holding once complete, those read so far while warming.',
    ['env'],
    () => sources.map(({ env, entitlement }) => [{ env }, entitlement.index.size]),
  );
  family(
    'doi_holdings_entitlement_index_complete',
    'gauge',
    '1 once the entitlement index holds every DOI; 0 while it is read in the background (lookups read the store meanwhile).',
    ['env'],
    () => sources.map(({ env, entitlement }) => [{ env }, entitlement.index.complete ? 1 : 0]),
  );
  family(
    'doi_holdings_entitlement_index_builds_total',
    'counter',
    'Full reads of the store into the entitlement index: 1 at start, then one per batch of files applied by another process.',
    ['env'],
    () => sources.map(({ env, entitlement }) => [{ env }, entitlement.index.builds]),
  );
  // one lookup serves every environment; read through the first service, which holds the running one after a reload
  const lookup = () => sources[0]?.entitlement.lookup;
  family(
    'doi_holdings_metadata_lookups_total',
    'counter',
    'Entitlement entries by metadata looked up at Crossref, by outcome (found, not_found, error, timeout; cached: from the lookup cache, no call).',
    ['outcome'],
    () => [...(lookup()?.counts ?? [])].map(([outcome, n]) => [{ outcome }, n] as Sample),
  );
  family(
    'doi_holdings_metadata_lookup_calls_total',
    'counter',
    "Calls to Crossref's REST API made by the metadata lookup (every try, 429s included).",
    [],
    () => {
      const l = lookup();
      return l ? [[{}, l.calls]] : [];
    },
  );
  family(
    'doi_holdings_metadata_lookup_cache_entries',
    'gauge',
    'Resolved lookups held in the lookup cache.',
    [],
    () => {
      const l = lookup();
      return l ? [[{}, l.cache.size]] : [];
    },
  );
  histogram<'platform'>(
    registry,
    'doi_holdings_platform_call_seconds',
    "Latency of calls to platforms' Entitlement APIs.",
    (put) => {
      for (const [platform, { latency }] of figures) put({ platform }, latency);
    },
  );
}
