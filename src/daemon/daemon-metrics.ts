import type { Registry } from 'prom-client';
import { counter, gauge, processRegistry } from '../http/index.ts';
import type { FollowedSources, HarvestState, SourceStatus, UrlSourceState } from '../updates/index.ts';
import type { EnvironmentRunner } from './environment-runner.ts';

/**
 * The daemon's own figures in /metrics, read from the running parts at each scrape, beside the process figures
 * (http/metrics/registry.ts): the app merges them after its own into the one registry it serves.
 */
export function daemonRegistry(
  envs: ReadonlyMap<string, EnvironmentRunner>,
  sources: () => FollowedSources | undefined,
  build: { version: string; commit: string },
): Registry {
  const registry = processRegistry();
  // one sample, always 1: its labels say which build answers (two at once on a dashboard: an upgrade under way)
  gauge(
    registry,
    'doi_holdings_build_info',
    'The program\'s version and the git commit it was built from ("unknown" when that cannot be told); always 1.',
    ['version', 'commit'],
    (set) => set(build, 1),
  );
  const seconds = (ms: number) => (ms > 0 ? ms / 1000 : 0);

  gauge(
    registry,
    'doi_holdings_ingest_lag_seconds',
    'How far the newest file finished is behind the newest file seen in the bucket (LastModified), seconds; 0 when nothing waits.',
    ['env'],
    (set) => {
      for (const [env, r] of envs) set({ env }, r.ingestor.stats.lagSeconds());
    },
  );
  gauge(
    registry,
    'doi_holdings_s3_last_listing_timestamp_seconds',
    'When a listing of the S3 bucket last succeeded (Unix time; 0: not yet).',
    ['env'],
    (set) => {
      for (const [env, r] of envs) if (r.mirror) set({ env }, seconds(r.mirror.lastListingAt));
    },
  );
  gauge(
    registry,
    'doi_holdings_s3_last_sync_timestamp_seconds',
    'When a whole S3 sync round (listing and downloads) last succeeded (Unix time; 0: not yet).',
    ['env'],
    (set) => {
      for (const [env, r] of envs) if (r.mirror) set({ env }, seconds(r.mirror.lastSuccessAt));
    },
  );
  gauge(
    registry,
    'doi_holdings_s3_failed_rounds',
    'S3 sync rounds failed in a row (0 once one succeeds): a round is listing and downloads; a long first round is not a failure.',
    ['env'],
    (set) => {
      for (const [env, r] of envs) if (r.mirror) set({ env }, r.mirror.failedRounds);
    },
  );
  counter(
    registry,
    'doi_holdings_s3_keys_skipped_total',
    'S3 keys not mirrored, by code (each said once by s3.key_skipped): BAD_PATH and PATH_CLASH keys no file system path takes, TOO_LARGE objects larger than any deposit can be.',
    ['env', 'code'],
    (add) => {
      for (const [env, r] of envs) for (const [code, n] of r.mirror?.skipped ?? []) add({ env, code }, n);
    },
  );
  /** a per-source gauge's samples: `value` of each followed source it applies to (undefined: not to this one) */
  const perSource =
    (value: (s: SourceStatus) => number | undefined) => (set: (labels: { source: string }, v: number) => void) => {
      for (const [source, s] of sources()?.status ?? []) {
        const v = value(s);
        if (v !== undefined) set({ source }, v);
      }
    };
  const perSeconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  gauge(
    registry,
    'doi_holdings_update_source_last_success_timestamp_seconds',
    'When an update source was last read whole or answered not-modified (Unix time; 0: not yet). source="dropDir": the drop folder.',
    ['source'],
    perSource((s) => seconds(s.lastSuccessAt)),
  );
  gauge(
    registry,
    'doi_holdings_update_source_last_failure_timestamp_seconds',
    'When reading an update source last failed (Unix time; 0: never).',
    ['source'],
    perSource((s) => seconds(s.lastFailureAt)),
  );
  gauge(
    registry,
    'doi_holdings_update_source_interval_seconds',
    'How often an update URL is fetched (everyMinutes), for the staleness alert.',
    ['source'],
    perSource((s) => perSeconds(s.everyMs)),
  );
  gauge(
    registry,
    'doi_holdings_update_source_stale_after_seconds',
    'An update source not read whole for this long is stale (staleAfterHours; default twice its interval plus an hour).',
    ['source'],
    perSource((s) => perSeconds(s.staleAfterMs)),
  );
  // a harvest's and a URL's figures are read from the store (its state) at each scrape
  const harvest = (value: (h: HarvestState) => number) =>
    perSource((s) => {
      const h = s.harvest?.();
      return h && value(h);
    });
  const url = (value: (u: UrlSourceState) => number) =>
    perSource((s) => {
      const u = s.url?.();
      return u && value(u);
    });
  gauge(
    registry,
    'doi_holdings_harvest_window_reached_timestamp_seconds',
    'The index date a Crossref harvest has reached: its next window starts there (Unix time of that day; 0: not yet).',
    ['source'],
    harvest((h) => (h.reached ? Date.parse(`${h.reached}T00:00:00Z`) / 1000 : 0)),
  );
  gauge(
    registry,
    'doi_holdings_harvest_last_window_works',
    'Works read by the last whole window of a Crossref harvest.',
    ['source'],
    harvest((h) => h.last?.works ?? 0),
  );
  gauge(
    registry,
    'doi_holdings_harvest_last_window_rows',
    'Update rows read by the last whole window of a Crossref harvest (used and skipped).',
    ['source'],
    harvest((h) => h.last?.rows ?? 0),
  );
  gauge(
    registry,
    'doi_holdings_update_source_last_import_rows',
    'Rows read by the last import of an update URL (used and skipped; a not-modified answer keeps it; 0: none yet).',
    ['source'],
    url((u) => u.last?.rows ?? 0),
  );
  gauge(
    registry,
    'doi_holdings_update_source_last_import_works',
    'Works with update information in the last import of an update URL (0: none yet).',
    ['source'],
    url((u) => u.last?.works ?? 0),
  );
  gauge(
    registry,
    'doi_holdings_harvest_window_pages',
    'Pages read so far by the window a Crossref harvest is working on (0: none in progress).',
    ['source'],
    harvest((h) => h.window?.pages ?? 0),
  );
  return registry;
}
