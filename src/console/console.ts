import type { EnvName } from '../config/index.ts';
import type { Entitlements } from '../entitlement/index.ts';
import type { IngestStats } from '../ingest/index.ts';
import { ACCESS_COLUMNS, type AccessCounts, type ConflictEntry, type FileEntry, type Store } from '../store/index.ts';
import type { SourceStatus } from '../updates/index.ts';
import { AppliedDays } from './applied-days.ts';
import { type Failures, FailuresView } from './failures-view.ts';

/**
 * The operator console's figures (docs/operations.md, "Operator console"), read at each view from what the parts
 * already keep: the store's live counters (per platform, and per platform and access type) and ledger, the ingestor's counts, the platforms' call figures and
 * latency histograms, their breakers, the entitlement index, the followed update sources. No view reads every
 * holding, nor (but once a minute, or when a file was decided) the whole ledger.
 */

export interface ConsoleEnv {
  store: Store;
  ingest?: IngestStats;
}

export interface ConsoleSources {
  version: string;
  envs: Partial<Record<EnvName, ConsoleEnv>>;
  entitlements: Entitlements;
  /** the daemon's followed update sources, by label; undefined while none are followed */
  updateSources?: () => ReadonlyMap<string, SourceStatus> | undefined;
  /** the program as the operator runs it here, before a command's arguments (`doi-holdings --config ...`) */
  command: string;
  now?: () => number;
}

/** Files listed as the latest applied. */
export const LATEST_FILES = 15;

export interface PlatformRow {
  name: string;
  /** calls that went out (ok, error, malformed, time-out) */
  calls: number;
  errorRate: number | undefined;
  timeoutRate: number | undefined;
  /** answered without a call: the breaker open, or no free slot */
  notCalled: number;
  p50Ms: number | undefined;
  p95Ms: number | undefined;
  breaker: 'closed' | 'open' | 'half-open';
}

export interface SourceRow {
  label: string;
  lastSuccessAt: number | undefined;
  lastFailureAt: number | undefined;
  lastError: string | undefined;
  /** the rows of its last import or window */
  rows: number | undefined;
  nextRunAt: number | undefined;
  stale: boolean;
}

export interface Overview {
  env: EnvName;
  envs: EnvName[];
  version: string;
  now: number;
  /**
   * live holdings per platform, and per platform and access type with their totals (undefined while the store's
   * access counters are not counted: a store an older program wrote since the daemon started)
   */
  holdings: {
    total: number;
    byPlatform: [string, number][];
    byAccess: { byPlatform: Record<string, AccessCounts>; total: AccessCounts } | undefined;
  };
  days: { day: string; files: number }[];
  latest: FileEntry[];
  failures: Failures;
  ingest: { queueDepth: number; lagSeconds: number } | undefined;
  sources: SourceRow[];
  platforms: PlatformRow[];
  index: { complete: boolean; dois: number; builds: number };
  command: string;
}

/**
 * A file's page in the console: its ledger entry and conflicts as the store keeps them. Not the store's FileReport
 * (the publishers' deposit report), whose conflicts carry no size and whose times are already text.
 */
export interface FileView {
  env: EnvName;
  envs: EnvName[];
  version: string;
  entry: FileEntry;
  conflicts: ConflictEntry[];
  command: string;
}

export class OperatorConsole {
  private readonly days = new Map<EnvName, AppliedDays>();
  private readonly failures = new Map<EnvName, FailuresView>();
  private readonly now: () => number;

  constructor(private readonly sources: ConsoleSources) {
    this.now = sources.now ?? Date.now;
    for (const [env, e] of this.envEntries()) {
      this.days.set(env, new AppliedDays(e.store));
      this.failures.set(env, new FailuresView(e.store, e.ingest));
    }
  }

  get version(): string {
    return this.sources.version;
  }

  get envNames(): EnvName[] {
    return this.envEntries().map(([env]) => env);
  }

  /** An environment's overview, or undefined when it is not configured. */
  overview(env: EnvName): Overview | undefined {
    const e = this.sources.envs[env];
    if (!e) return undefined;
    const now = this.now();
    const { store, ingest } = e;
    const byPlatform = Object.entries(store.liveCounts()).sort(([a], [b]) => (a < b ? -1 : 1));
    const latest: FileEntry[] = [];
    for (const { key } of store.appliedNewestFirst()) {
      const entry = store.fileEntry(key);
      if (entry) latest.push(entry);
      if (latest.length === LATEST_FILES) break;
    }
    const index = this.sources.entitlements.forStore(store).index;
    return {
      env,
      envs: this.envNames,
      version: this.sources.version,
      now,
      holdings: { total: byPlatform.reduce((n, [, c]) => n + c, 0), byPlatform, byAccess: byAccessOf(store) },
      days: this.days.get(env)!.days(now),
      latest,
      failures: this.failures.get(env)!.read(now),
      ingest: ingest && { queueDepth: ingest.queueDepth, lagSeconds: ingest.lagSeconds() },
      sources: this.sourceRows(now),
      platforms: this.platformRows(),
      index: { complete: index.complete, dois: index.size, builds: index.builds },
      command: this.sources.command,
    };
  }

  /** A file's ledger entry with its same-name conflicts, or undefined when the ledger does not hold the key. */
  fileView(env: EnvName, key: string): FileView | undefined {
    const store = this.sources.envs[env]?.store;
    const entry = store?.fileEntry(key);
    if (!store || !entry) return undefined;
    return {
      env,
      envs: this.envNames,
      version: this.sources.version,
      entry,
      conflicts: store.conflictsOf(key),
      command: this.sources.command,
    };
  }

  private envEntries(): [EnvName, ConsoleEnv][] {
    return Object.entries(this.sources.envs).filter((x): x is [EnvName, ConsoleEnv] => x[1] !== undefined);
  }

  /** The update sources' figures as /healthz and /metrics read them. */
  private sourceRows(now: number): SourceRow[] {
    const rows: SourceRow[] = [];
    for (const [label, s] of this.sources.updateSources?.() ?? []) {
      const harvest = s.harvest?.();
      const url = s.url?.();
      const since = s.lastSuccessAt;
      rows.push({
        label,
        lastSuccessAt: s.lastSuccessAt || undefined,
        lastFailureAt: s.lastFailureAt || undefined,
        lastError: harvest?.lastError?.code ?? url?.lastError?.code,
        rows: harvest?.last?.rows ?? url?.last?.rows,
        nextRunAt: s.nextRunAt,
        stale: s.staleAfterMs !== undefined && since > 0 && now - since > s.staleAfterMs,
      });
    }
    return rows;
  }

  /** Each platform with an Entitlement API: its calls, their error and time-out rates, latency, breaker. */
  private platformRows(): PlatformRow[] {
    const { clients, figures } = this.sources.entitlements;
    const rows: PlatformRow[] = [];
    for (const [name, f] of [...figures].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const { ok, error, malformed, timeout, breaker_open, no_slot, rate_limited } = f.calls;
      const calls = ok + error + malformed + timeout;
      const p50 = f.latency.quantile(0.5);
      const p95 = f.latency.quantile(0.95);
      rows.push({
        name,
        calls,
        errorRate: calls > 0 ? (error + malformed) / calls : undefined,
        timeoutRate: calls > 0 ? timeout / calls : undefined,
        notCalled: breaker_open + no_slot + rate_limited, // answered without a call: breaker, our queue, its rate
        p50Ms: p50 === undefined ? undefined : p50 * 1000,
        p95Ms: p95 === undefined ? undefined : p95 * 1000,
        breaker: clients.get(name)?.breaker.state ?? 'closed',
      });
    }
    return rows;
  }
}

/** The store's access counters with their totals over platforms. */
function byAccessOf(store: Store): { byPlatform: Record<string, AccessCounts>; total: AccessCounts } | undefined {
  const byPlatform = store.liveCountsByAccess();
  if (!byPlatform) return undefined;
  const total = Object.fromEntries(ACCESS_COLUMNS.map((a) => [a, 0])) as AccessCounts;
  for (const counts of Object.values(byPlatform)) for (const a of ACCESS_COLUMNS) total[a] += counts[a];
  return { byPlatform, total };
}
