import type { Registry } from 'prom-client';
import type { EnvName } from '../../config/index.ts';
import type { IngestStats } from '../../ingest/index.ts';
import type { Store } from '../../store/index.ts';
import { familyOf, oncePerScrape } from './registry.ts';

/** Prometheus text exposition (format 0.0.4) of the stores and the ingestors, read from them at each scrape. */

interface MetricsSource {
  env: EnvName;
  store: Store;
  ingest?: IngestStats;
}

export function registerStoreMetrics(registry: Registry, sources: readonly MetricsSource[], now: () => number): void {
  const family = familyOf(registry);
  family('doi_holdings_live', 'gauge', 'Live holdings per environment and platform.', ['env', 'platform'], () =>
    sources.flatMap(({ env, store }) =>
      Object.entries(store.liveCounts()).map(
        ([platform, n]) => [{ env, platform }, n] as [Record<string, string>, number],
      ),
    ),
  );
  // a family of its own: an `access` label on doi_holdings_live would change that family's series
  family(
    'doi_holdings_live_by_access',
    'gauge',
    'Live holdings per environment, platform and access type (none: deposited without one).',
    ['env', 'platform', 'access'],
    () =>
      sources.flatMap(({ env, store }) =>
        Object.entries(store.liveCountsByAccess() ?? {}).flatMap(([platform, byAccess]) =>
          Object.entries(byAccess).map(
            ([access, n]) => [{ env, platform, access }, n] as [Record<string, string>, number],
          ),
        ),
      ),
  );
  family('doi_holdings_works_with_updates', 'gauge', 'Works with at least one update.', ['env'], () =>
    sources.map(({ env, store }) => [{ env }, store.updatesIndex.size]),
  );
  // read once a scrape: the three families below describe one and the same head
  const heads = oncePerScrape(() => sources.map(({ env, store }) => ({ env, head: store.changeFeed.head() })));
  // replicas whose commit count and lineage agree hand out interchangeable cursors (docs/design.md, "Change feed").
  // The lineage is a value, not a label: a label that changes per commit would make a new time series per commit.
  family('doi_holdings_change_feed_commit', 'gauge', 'Commits that changed the change feed.', ['env'], () =>
    heads().map(({ env, head }) => [{ env }, head.commit]),
  );
  family(
    'doi_holdings_change_feed_lineage',
    'gauge',
    "The change feed's lineage hash after its last commit: its first 13 hex digits as a number.",
    ['env'],
    () => heads().map(({ env, head }) => [{ env }, lineageValue(head.hash)]),
  );
  family('doi_holdings_change_feed_seq', 'gauge', "The change feed's last sequence number.", ['env'], () =>
    heads().map(({ env, head }) => [{ env }, head.seq]),
  );
  const ingest = sources.filter((s) => s.ingest) as Required<MetricsSource>[];
  family('doi_holdings_files_applied_total', 'counter', 'Deposit files applied since start.', ['env'], () =>
    ingest.map(({ env, ingest: i }) => [{ env }, i.filesApplied]),
  );
  family('doi_holdings_files_quarantined_total', 'counter', 'Deposit files quarantined since start.', ['env'], () =>
    ingest.map(({ env, ingest: i }) => [{ env }, i.quarantined]),
  );
  family('doi_holdings_file_conflicts_total', 'counter', 'Same-key-other-content deposits since start.', ['env'], () =>
    ingest.map(({ env, ingest: i }) => [{ env }, i.conflicts]),
  );
  family('doi_holdings_file_retries_total', 'counter', 'Recoverable faults retried since start.', ['env'], () =>
    ingest.map(({ env, ingest: i }) => [{ env }, i.retries]),
  );
  family('doi_holdings_ingest_queue_depth', 'gauge', 'Files waiting to be applied.', ['env'], () =>
    ingest.map(({ env, ingest: i }) => [{ env }, i.queueDepth]),
  );
  family('doi_holdings_records_total', 'counter', 'Deposit records by outcome since start.', ['env', 'outcome'], () =>
    ingest.flatMap(({ env, ingest: i }) =>
      Object.entries(i.records).map(([outcome, n]) => [{ env, outcome }, n] as [Record<string, string>, number]),
    ),
  );
  family(
    'doi_holdings_seconds_since_progress',
    'gauge',
    'Seconds since the ingestor last finished a file, or since it started.',
    ['env'],
    () => ingest.map(({ env, ingest: i }) => [{ env }, Math.round((now() - i.lastProgressAt) / 1000)]),
  );
}

/** 13 hex digits are 52 bits: a float64 holds them exactly, so equal values mean equal hashes to that length. */
function lineageValue(hash: string): number {
  return Number.parseInt(hash.slice(0, 13), 16);
}
