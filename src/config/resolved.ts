import type { UpdateFormat } from '../update-record/index.ts';

/** The fully-defaulted config every part is built from: absolute paths, secrets read, defaults filled in. */

export type EnvName = 'production' | 'staging';
export const ENV_NAMES: readonly EnvName[] = ['production', 'staging'];

interface LocalBucketSettings {
  kind: 'local';
  /** the folder that is watched */
  path: string;
}

export interface S3BucketSettings {
  kind: 's3';
  /** the local mirror folder, watched like a local bucket */
  path: string;
  endpoint?: string;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** names of the environment variables the credentials came from, for messages */
  credentialSource: string;
  pollMs: number;
  /** each file's report is written back under reports/ (bucket/s3/report-writer.ts), which the mirror leaves out */
  reports?: true;
}

export type BucketSettings = LocalBucketSettings | S3BucketSettings;

/** A token bucket's settings: tokens a second, and the most it holds. */
export interface RateSettings {
  perSecond: number;
  burst: number;
}

export interface PlatformSettings {
  name: string;
  /** with entitlementSecret: the platform's Entitlement API; absent: paid DOIs answer "publisher_not_supported" */
  entitlementUrl?: string;
  entitlementSecret?: string;
  entitlementTimeoutMs: number;
  /** calls in flight to this platform at most; more wait (within their time-out) */
  entitlementConcurrency: number;
  /** DOIs per call at most */
  entitlementBatch: number;
  /** how long a platform's answer is served from the cache; 0: not cached */
  entitlementCacheSeconds: number;
  /** the calls a second the platform takes; absent: no limit */
  entitlementRate?: RateSettings;
  /** the key its deposit reports are read with (reportKeyEnv's value); absent: its reports are not served */
  reportKey?: string;
}

export interface IntegratorSettings {
  name: string;
  apiKey: string;
  /** a retired key still accepted until removed from the config */
  previousApiKey?: string;
  /** the `updates` feature on Entitlement Objects */
  updates: boolean;
  /** false: never served from the entitlement answer cache */
  cache: boolean;
  /**
   * true: the platform counts every use (docs/interface.md, "Entitlement API"): no answer cache (neither read nor
   * filled), a platform with an Entitlement API is asked for its open holdings too, and its customerID is shown
   */
  counter: boolean;
  /** its Entitlement API requests and DOIs a second (each absent: no limit) */
  rateLimit?: { requests?: RateSettings; dois?: RateSettings };
}

export interface EntitlementSettings {
  /** the JWT `iss` claim, and the product in the user-agent of calls to platforms */
  name: string;
  /** the user-agent of calls to platforms; undefined: "<name> Entitlement API" (userAgentOf) */
  userAgent?: string;
  cacheMaxEntries: number;
  /** what the cached answers of one environment may take, counted by their strings */
  cacheMaxBytes: number;
  /** consecutive failed calls that open a platform's circuit breaker */
  breakerFailures: number;
  breakerCooldownMs: number;
  /** entries by metadata resolved through Crossref; absent: they answer 400 */
  lookup?: MetadataLookupSettings;
}

/** `[entitlements.lookup]`: where and how entries by metadata are resolved (entitlement/lookup/). */
export interface MetadataLookupSettings {
  /** the REST API's base address, without a trailing slash */
  url: string;
  mailto: string;
  plusToken?: string;
  /** the variable the token is read from, for messages when it is unset */
  plusTokenEnv?: string;
  /** the time a request's lookups may take together */
  timeoutMs: number;
  /** calls to Crossref in flight at most (Crossref's advertised limit may be lower) */
  concurrency: number;
  /** resolved lookups kept (0: none) */
  cacheEntries: number;
}

export const DEFAULT_LOOKUP = { timeoutMs: 1000, concurrency: 16, cacheEntries: 100_000 };

export const DEFAULT_ENTITLEMENTS: EntitlementSettings = {
  name: 'doi-holdings',
  cacheMaxEntries: 100_000,
  cacheMaxBytes: 128 * 1024 * 1024,
  breakerFailures: 5,
  breakerCooldownMs: 30_000,
};

export const DEFAULT_PLATFORM_ENTITLEMENT = {
  entitlementTimeoutMs: 1000,
  entitlementConcurrency: 32,
  entitlementBatch: 20,
  entitlementCacheSeconds: 0,
};

export interface UpdateUrlSettings {
  url: string;
  format: UpdateFormat;
  everyMs: number;
  /** no success for this long: the source is stale (a /healthz warning, the alert) */
  staleAfterMs: number;
}

export interface CrossrefHarvestSettings {
  name: string;
  /** the REST API's base address, without a trailing slash */
  url: string;
  mailto: string;
  plusToken?: string;
  /** the variable the token is read from, for messages when it is unset */
  plusTokenEnv?: string;
  everyMs: number;
  /** YYYY-MM-DD: where the first harvest starts; absent: the beginning */
  from?: string;
  rows: number;
  /** a scheduled run is full when the last full one is older than this; 0: never by itself */
  fullEveryMs: number;
  staleAfterMs: number;
  /** the nice value of the daemon's harvest process (--harvest runs at the priority it was started with) */
  nice: number;
  /** the daemon's harvest process runs under Linux's SCHED_IDLE policy (base/child-process.ts priorityArgv) */
  idle: boolean;
}

export const DEFAULT_CROSSREF_URL = 'https://api.crossref.org';

/** A source not heard from for twice its interval plus an hour is stale, unless configured otherwise. */
export function defaultStaleAfterMs(everyMs: number): number {
  return 2 * everyMs + 3600_000;
}

export interface IngestSettings {
  maxDecompressedBytes: number;
  maxTries: number;
  retryBaseMs: number;
  /** how long a file's size must stay unchanged before it is read (write-finish detection) */
  settleMs: number;
  /** how often a local bucket folder is listed for files its watch missed; 0: never */
  rescanSeconds: number;
  /** at most this many waiting files apply in one pass, one transaction (docs/design.md, "A backlog in one pass") */
  passFiles: number;
  /** a backlog of at least this many waiting files applies as one sorted pass (docs/design.md, "A backlog in one sorted pass") */
  sortedPassFiles: number;
  /** records a sorted pass commits at a time: a crash loses at most one chunk's work */
  passChunkRecords: number;
  /** worker threads that read and parse deposit files (a backlog's files side by side) */
  parseWorkers: number;
}

export interface Config {
  /** the config file this came from, or BUILT_IN_SOURCE where none was read (load.ts) */
  source: string;
  /**
   * the names `secretsFile` gave a value: the file owns them, so a reload reads them from the file alone (a line
   * removed there unsets the name, though systemd's EnvironmentFile put it in the process environment at start)
   */
  secretNames: readonly string[];
  /** drainMs: how long a stop serves on with /readyz 503 before the port closes (`server.drainSeconds`) */
  server: {
    host: string;
    port: number;
    maxBodyBytes: number;
    bodyTimeoutMs: number;
    drainMs: number;
    /** proxies whose X-Forwarded-For is believed (`server.trustedProxies`); absent: none */
    trustedProxies?: readonly string[];
    /** the operator console's listener (`server.adminListen`); absent: the console is not on a listener of its own */
    admin?: { host: string; port: number };
    /** the operator console's key (`server.adminKeyEnv`'s value); absent: no key, so never on the public listener */
    adminKey?: string;
  };
  /** the status page's limit of pages a second per client address; absent: none */
  statusPage?: { rateLimit: RateSettings };
  /** changeFeedKeepMs: how long a withdrawal stays in the change feed (`updates.changeFeedKeepDays`) */
  store: { dir: string; mapSizeBytes: number; changeFeedKeepMs: number };
  ingest: IngestSettings;
  buckets: Partial<Record<EnvName, BucketSettings>> & { production: BucketSettings };
  platforms: PlatformSettings[];
  integrators: IntegratorSettings[];
  entitlements: EntitlementSettings;
  /** nice: of the process dropped files and URLs are imported in */
  updates: { dropDir?: string; nice: number; urls: UpdateUrlSettings[]; crossref: CrossrefHarvestSettings[] };
  /** push alerts (`[webhooks]`): absent from configs resolved before they existed (tests build Configs by hand) */
  webhooks?: WebhookSettings;
}

/** `[webhooks]`, defaulted (docs/operations.md, "Push alerts") */
export interface WebhookSettings {
  enabled: boolean;
  path: string;
  servedBy?: string;
  allowHttp: boolean;
  allowPrivateTargets: boolean;
  concurrency: number;
  perIntegratorConcurrency: number;
  maxSubscriptionsPerIntegrator: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  retryForMs: number;
  pollMs: number;
  mapSizeBytes: number;
  keepEventsMs: number;
  /** of the delivery process (webhooks/delivery-process.ts), as a harvest's */
  nice: number;
  idle: boolean;
}

export const DEFAULT_INGEST: IngestSettings = {
  maxDecompressedBytes: 64 * 1024 * 1024,
  maxTries: 5,
  retryBaseMs: 500,
  settleMs: 200,
  rescanSeconds: 60,
  passFiles: 100,
  sortedPassFiles: 101,
  passChunkRecords: 250_000,
  parseWorkers: 2,
};
