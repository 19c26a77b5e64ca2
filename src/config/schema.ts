import { type Static, type TProperties, Type as t } from '@sinclair/typebox';
import { UpdateFormat } from '../update-record/index.ts';

/** The TOML shape of the config (README, "Configuration reference"), as written by the operator (paths may be relative to the file). */

/**
 * A TOML table of the config: a key it does not define is refused, so that a misspelt one is an error, not a
 * setting silently left at its default.
 */
const TomlTable = <T extends TProperties>(properties: T) => t.Object(properties, { additionalProperties: false });

const PlatformName = t.String({
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: 'the bucket folder of its files',
});

/**
 * Text sent in platform calls' headers and JWT: printable ASCII, spaces only between words. fetch refuses a header
 * value with a control character (and trims its ends), and that refusal would count against the platform's breaker,
 * for every integrator. A product name (the user-agent's first word) has no spaces at all.
 */
const HeaderText = (maxLength: number) =>
  t.String({
    minLength: 1,
    maxLength,
    pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
    patternMeans: 'printable ASCII, spaces only between words',
  });
const ProductName = t.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[\\x21-\\x7e]+$',
  patternMeans: 'printable ASCII, no spaces or control characters',
});

/** A rate of a token bucket: positive and finite (TOML's inf and nan are refused). */
const PerSecond = t.Number({ exclusiveMinimum: 0, maximum: 1_000_000 });
/** The most a token bucket holds: what may be spent at once after a quiet spell. */
const Burst = t.Integer({ minimum: 1, maximum: 1_000_000 });

/** The most an LMDB file (the store's, the subscriptions') may grow to, in GiB. */
const MapSizeGiB = t.Number({ exclusiveMinimum: 0, maximum: 1024 });

/** An integrator's rate limit (docs/interface.md, "Rate limits"): token buckets of requests and of DOIs. */
const IntegratorRateLimit = TomlTable({
  requestsPerSecond: t.Optional(PerSecond),
  /** default: a second's worth, at least 1 */
  requestBurst: t.Optional(Burst),
  doisPerSecond: t.Optional(PerSecond),
  /** default: a second's worth, at least one full request (100 DOIs) */
  doiBurst: t.Optional(Burst),
});

const LocalBucket = TomlTable({
  kind: t.Literal('local'),
  path: t.String({ minLength: 1 }),
  /** refused with its reason (load.ts): reports are written back to S3 buckets only */
  reports: t.Optional(t.Boolean()),
});

const S3Bucket = TomlTable({
  kind: t.Literal('s3'),
  /** the local mirror folder */
  path: t.String({ minLength: 1 }),
  endpoint: t.Optional(t.String({ pattern: '^https?://' })),
  region: t.Optional(t.String({ minLength: 1 })), // 'us-east-1' when absent (load.ts)
  bucket: t.String({ minLength: 3 }),
  prefix: t.Optional(t.String()),
  forcePathStyle: t.Optional(t.Boolean()),
  accessKeyIdEnv: t.Optional(t.String({ minLength: 1 })),
  secretAccessKeyEnv: t.Optional(t.String({ minLength: 1 })),
  pollSeconds: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 86400 })),
  /** write each file's report back as reports/<platform>/<name>.json (needs write permission) */
  reports: t.Optional(t.Boolean()),
});

const BucketConfig = t.Union([LocalBucket, S3Bucket]);

const PlatformConfig = TomlTable({
  name: PlatformName,
  /** the platform's own Entitlement API, called for paid DOIs (docs/interface.md, "Entitlement API") */
  entitlementUrl: t.Optional(t.String({ pattern: '^https?://' })),
  /** the environment variable holding the JWT shared secret (required with entitlementUrl) */
  entitlementSecretEnv: t.Optional(t.String({ minLength: 1 })),
  entitlementTimeoutMs: t.Optional(t.Integer({ minimum: 1, maximum: 60000 })),
  entitlementConcurrency: t.Optional(t.Integer({ minimum: 1, maximum: 1024 })),
  entitlementBatch: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  entitlementCacheSeconds: t.Optional(t.Number({ minimum: 0, maximum: 7 * 86400 })),
  /** the calls a second the platform declared it takes; more wait, within their time-out (default: no limit) */
  entitlementRatePerSecond: t.Optional(PerSecond),
  /** calls it takes at once after a quiet spell (default: a second's worth, at least 1) */
  entitlementRateBurst: t.Optional(Burst),
  /** the environment variable holding the key (x-api-key) this platform reads its deposit reports with */
  reportKeyEnv: t.Optional(t.String({ minLength: 1 })),
});

const IntegratorConfig = TomlTable({
  /** sent to platforms as `x-integrator-id` and the JWT `sub` */
  name: HeaderText(100),
  apiKey: t.Optional(t.String({ minLength: 8 })),
  apiKeyEnv: t.Optional(t.String({ minLength: 1 })),
  /** a key being retired, still accepted beside the new one while the integrator switches (key rotation) */
  previousApiKey: t.Optional(t.String({ minLength: 8 })),
  previousApiKeyEnv: t.Optional(t.String({ minLength: 1 })),
  updates: t.Optional(t.Boolean()),
  /** false: every entitlement answer is asked live, never from the answer cache (e.g. COUNTER reporting) */
  cache: t.Optional(t.Boolean()),
  /**
   * true: every use is one the platform can count (COUNTER): no answer cache, a platform with an Entitlement API
   * is asked even where its deposit answers, and its customerID is passed on
   */
  counter: t.Optional(t.Boolean()),
  /** its Entitlement API requests and DOIs a second; over it, 429 (default: no limit) */
  rateLimit: t.Optional(IntegratorRateLimit),
});

const UpdateUrlSource = TomlTable({
  url: t.String({ pattern: '^https?://' }),
  format: UpdateFormat,
  // a timer's longest interval is 2^31-1 ms (about 24.8 days); longer ones would fire at once, again and again
  everyMinutes: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 35_000 })),
  /** not read whole (nor answered not-modified) for this long: /healthz warns (default twice everyMinutes plus an hour) */
  staleAfterHours: t.Optional(t.Number({ exclusiveMinimum: 0 })),
});

/** An incremental harvest of the Crossref REST API's updates (docs/operations.md, "Update sources"). */
const CrossrefHarvestSource = TomlTable({
  /** names the harvest in logs, metrics and its stored progress (default "crossref") */
  name: t.Optional(t.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' })),
  /** the REST API's base address (default https://api.crossref.org) */
  url: t.Optional(t.String({ pattern: '^https?://' })),
  /** the contact Crossref's polite pool asks for: sent as `mailto` and in the User-Agent */
  mailto: t.String({ pattern: '^[^@\\s]+@[^@\\s]+$' }),
  /** the environment variable holding a Metadata Plus token (sent as `Crossref-Plus-API-Token: Bearer ...`) */
  plusTokenEnv: t.Optional(t.String({ minLength: 1 })),
  everyMinutes: t.Optional(t.Number({ minimum: 1, maximum: 35_000 })),
  /** the first harvest starts at this index date (YYYY-MM-DD); absent: from the beginning */
  from: t.Optional(t.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
  /** works per page (Crossref allows 1000 at most) */
  rows: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
  /** a full harvest (which also sees a work whose last update was withdrawn) this often; 0: only when asked */
  fullEveryDays: t.Optional(t.Number({ minimum: 0 })),
  staleAfterHours: t.Optional(t.Number({ exclusiveMinimum: 0 })),
  /** the nice value of the process the daemon harvests in (default 19): under load, answering requests comes first */
  nice: t.Optional(t.Integer({ minimum: 0, maximum: 19 })),
  /** that process runs under Linux's SCHED_IDLE policy: the smallest CPU share, yielded at once (default true) */
  idle: t.Optional(t.Boolean()),
});

/** Entitlement entries by metadata (title, journal, ...), resolved to a DOI through Crossref (docs/interface.md). */
const MetadataLookupConfig = TomlTable({
  /** the REST API's base address (default https://api.crossref.org) */
  url: t.Optional(t.String({ pattern: '^https?://' })),
  /** the contact Crossref's polite pool asks for: sent as `mailto` and in the User-Agent */
  mailto: t.String({ pattern: '^[^@\\s]+@[^@\\s]+$' }),
  /** the environment variable holding a Metadata Plus token (sent as `Crossref-Plus-API-Token: Bearer ...`) */
  plusTokenEnv: t.Optional(t.String({ minLength: 1 })),
  /** how long a request's lookups may take together, before its platforms are asked (default 1000) */
  timeoutMs: t.Optional(t.Integer({ minimum: 50, maximum: 30_000 })),
  /** at most this many calls to Crossref at once, and never more than Crossref advertises (default 16) */
  concurrency: t.Optional(t.Integer({ minimum: 1, maximum: 64 })),
  /** resolved lookups kept, least recently used out (default 100000) */
  cacheEntries: t.Optional(t.Integer({ minimum: 0, maximum: 10_000_000 })),
});

export const ConfigFile = TomlTable({
  /** KEY=value lines read at every (re)load; its values win over the process environment for every *Env field */
  secretsFile: t.Optional(t.String({ minLength: 1 })),
  server: t.Optional(
    TomlTable({
      listen: t.Optional(t.String({ pattern: '^[^:]+:[0-9]{1,5}$' })),
      maxBodyBytes: t.Optional(t.Integer({ minimum: 1024 })),
      /** a request body not arrived whole by then is answered 408 (below the server's idle time-out, 255 s at most) */
      bodyTimeoutMs: t.Optional(t.Integer({ minimum: 100, maximum: 240_000 })),
      /** a stop answers /readyz 503 and goes on serving this long before the port closes (once /readyz was asked) */
      drainSeconds: t.Optional(t.Number({ minimum: 0, maximum: 60 })),
      /** proxies (addresses, CIDR blocks) whose X-Forwarded-For is believed for the client's address */
      trustedProxies: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000 })),
      /** the operator's address: a second listener serving the operator console (/console); absent: none */
      adminListen: t.Optional(t.String({ pattern: '^[^:]+:[0-9]{1,5}$' })),
      /**
       * the environment variable holding the operator console's key (16 characters at least): with adminListen,
       * asked there too; without, the console is served on the public listener to requests that carry it
       */
      adminKeyEnv: t.Optional(t.String({ minLength: 1 })),
    }),
  ),
  /** the public document status page (docs/interface.md, "Document status page") */
  statusPage: t.Optional(
    TomlTable({
      /** pages a second per client address; over it, 429 (default: no limit) */
      rateLimit: t.Optional(TomlTable({ requestsPerSecond: PerSecond, requestBurst: t.Optional(Burst) })),
    }),
  ),
  store: t.Optional(
    TomlTable({
      dir: t.Optional(t.String({ minLength: 1 })),
      mapSizeGiB: t.Optional(MapSizeGiB),
    }),
  ),
  ingest: t.Optional(
    TomlTable({
      maxDecompressedBytes: t.Optional(t.Integer({ minimum: 1024 })),
      maxTries: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
      retryBaseMs: t.Optional(t.Integer({ minimum: 1 })),
      settleMs: t.Optional(t.Integer({ minimum: 0, maximum: 60000 })),
      rescanSeconds: t.Optional(t.Integer({ minimum: 0, maximum: 86400 })),
      passFiles: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
      sortedPassFiles: t.Optional(t.Integer({ minimum: 2 })),
      passChunkRecords: t.Optional(t.Integer({ minimum: 1000, maximum: 10_000_000 })),
      parseWorkers: t.Optional(t.Integer({ minimum: 1, maximum: 64 })),
    }),
  ),
  buckets: TomlTable({
    production: BucketConfig,
    staging: t.Optional(BucketConfig),
  }),
  platforms: t.Array(PlatformConfig, { minItems: 1 }),
  integrators: t.Optional(t.Array(IntegratorConfig)),
  entitlements: t.Optional(
    TomlTable({
      /** the JWT `iss` claim and the user-agent's product name in calls to platforms */
      name: t.Optional(ProductName),
      /** the user-agent of calls to platforms, for a platform that expects another's (default "<name> Entitlement API") */
      userAgent: t.Optional(HeaderText(200)),
      cacheMaxEntries: t.Optional(t.Integer({ minimum: 1, maximum: 10_000_000 })),
      cacheMaxBytes: t.Optional(t.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 ** 3 })),
      breakerFailures: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
      breakerCooldownSeconds: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 3600 })),
      /** entries by metadata resolved through Crossref's REST API; absent: such entries answer 400 */
      lookup: t.Optional(MetadataLookupConfig),
    }),
  ),
  /** push alerts (docs/operations.md, "Push alerts"): one replica holds the subscriptions and delivers */
  webhooks: t.Optional(
    TomlTable({
      /** this replica holds subscriptions and delivers; the others answer /v2.2/subscriptions 503 */
      enabled: t.Optional(t.Boolean()),
      /** the LMDB environment of subscriptions (default var/webhooks): integrators' state, not rebuilt from the bucket */
      path: t.Optional(t.String({ minLength: 1 })),
      /** where integrators manage subscriptions, named in the other replicas' 503 (e.g. https://alerts.example.org) */
      servedBy: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      /** plain http:// targets (tests, a lab); off by default */
      allowHttp: t.Optional(t.Boolean()),
      /** targets at private, loopback, link-local or metadata addresses (tests); off by default */
      allowPrivateTargets: t.Optional(t.Boolean()),
      /** deliveries in flight at once, across every subscription */
      concurrency: t.Optional(t.Integer({ minimum: 1, maximum: 4096 })),
      /** deliveries in flight at once for one integrator: its slow receivers leave the other slots to the others */
      perIntegratorConcurrency: t.Optional(t.Integer({ minimum: 1, maximum: 4096 })),
      /** subscriptions one integrator may hold; a creation over it is refused (400 TOO_MANY_SUBSCRIPTIONS) */
      maxSubscriptionsPerIntegrator: t.Optional(t.Integer({ minimum: 1, maximum: 100_000 })),
      /** a delivery not answered whole by then failed */
      timeoutMs: t.Optional(t.Integer({ minimum: 100, maximum: 60_000 })),
      /** the first retry's wait; each next one doubles, with jitter, up to retryMaxMs */
      /** at most 2^31 - 1 ms (24.8 days): a longer timer would overflow setTimeout and fire at once */
      retryBaseMs: t.Optional(t.Integer({ minimum: 1, maximum: 2 ** 31 - 1 })),
      retryMaxMs: t.Optional(t.Integer({ minimum: 1, maximum: 2 ** 31 - 1 })),
      /** a delivery failing for this long pauses its subscription (default 72: three days) */
      retryForHours: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 720 })),
      /** how often the change feed is looked at for new changes */
      pollMs: t.Optional(t.Integer({ minimum: 10, maximum: 60_000 })),
      mapSizeGiB: t.Optional(MapSizeGiB),
      /** events are kept this long (default 30) once no subscription has them still to send; a replay reaches them */
      keepEventsDays: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 36_500 })),
      /** the nice value of the process the daemon delivers in (default 19): under load, answering requests comes first */
      nice: t.Optional(t.Integer({ minimum: 0, maximum: 19 })),
      /** that process runs under Linux's SCHED_IDLE policy: the smallest CPU share, yielded at once (default true) */
      idle: t.Optional(t.Boolean()),
    }),
  ),
  updates: t.Optional(
    TomlTable({
      dropDir: t.Optional(t.String({ minLength: 1 })),
      /** the nice value of the process the daemon imports dropped files and URLs in (default 10) */
      nice: t.Optional(t.Integer({ minimum: 0, maximum: 19 })),
      /** how long a work whose updates were all withdrawn stays in the change feed; older cursors get 410 */
      changeFeedKeepDays: t.Optional(t.Number({ minimum: 0, maximum: 36_500 })),
      urls: t.Optional(t.Array(UpdateUrlSource)),
      crossref: t.Optional(t.Array(CrossrefHarvestSource)),
    }),
  ),
});
export type ConfigFile = Static<typeof ConfigFile>;
