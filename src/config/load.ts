import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { FaultError, fault } from '../base/index.ts';
import { MAX_DOIS_PER_REQUEST } from '../doi/index.ts';
import { parseSourceDate } from '../update-record/index.ts';
import { parseAddressBlock } from './address-block.ts';
import { bucketsApartProblems, normalisePrefix } from './buckets-apart.ts';
import {
  type BucketSettings,
  type Config,
  DEFAULT_CROSSREF_URL,
  DEFAULT_ENTITLEMENTS,
  DEFAULT_INGEST,
  DEFAULT_LOOKUP,
  DEFAULT_PLATFORM_ENTITLEMENT,
  defaultStaleAfterMs,
  ENV_NAMES,
  type MetadataLookupSettings,
  type RateSettings,
} from './resolved.ts';
import { ConfigFile } from './schema.ts';
import { readSecretsFile } from './secrets-file.ts';

/**
 * The harvest's default priority, and the push alerts' delivery process's: the lowest there is. A harvest is background work, and on 2 cores at nice 10 it
 * still took 24-31% of the Updates API's rate while it ran; at 19 6-27%, 16% on average; at 19 under SCHED_IDLE
 * 7-18%, 12% on average (bench/harvest.ts, 3 runs each, in turns).
 */
const HARVEST_NICE = 19;
const HARVEST_IDLE = true;

const checkConfig = TypeCompiler.Compile(ConfigFile);

/**
 * Reads, validates and resolves a TOML config. Every fault is listed with its path; `env` is passed in
 * (not read from process.env here) so tests control it.
 */
interface LoadOptions {
  /** serve needs every secret; CLI commands that never reach S3 or HTTP do not (false) */
  requireSecrets?: boolean;
  /**
   * Config.source when no file was read (the copy embedded in the program): `path` then only anchors relative
   * paths, and naming it would send the operator to a file that is not there
   */
  source?: string;
}

/** Config.source of the config embedded in the program, read where no config file is given or found */
export const BUILT_IN_SOURCE = 'built-in default';

export function loadConfig(path: string, env: Record<string, string | undefined>, opts: LoadOptions = {}): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new FaultError(fault('CONFIG_UNREADABLE', `config ${path}: cannot read: ${(e as Error).message}`));
  }
  let raw: unknown;
  try {
    raw = Bun.TOML.parse(text);
  } catch (e) {
    throw new FaultError(fault('CONFIG_NOT_TOML', `config ${path}: not valid TOML: ${(e as Error).message}`));
  }
  return resolveConfig(raw, path, env, opts);
}

export function resolveConfig(
  raw: unknown,
  path: string,
  processEnv: Record<string, string | undefined>,
  opts: LoadOptions = {},
): Config {
  const problems = [...checkConfig.Errors(raw)].flatMap(describeError);
  // own names only: a variable named `constructor` or `toString` in the config must not find Object's members
  const env: Record<string, string | undefined> = Object.assign(Object.create(null), processEnv);
  let secretNames: string[] = [];
  // read even when the schema found faults, so that one reload lists the faults of both files
  const secretsFile = (raw as Partial<ConfigFile> | undefined)?.secretsFile;
  if (typeof secretsFile === 'string' && secretsFile !== '') {
    const secrets = readSecretsFile(resolve(dirname(resolve(path)), secretsFile));
    problems.push(...secrets.problems);
    Object.assign(env, secrets.values);
    secretNames = Object.keys(secrets.values);
  }
  if (problems.length === 0)
    problems.push(...semanticProblems(raw as ConfigFile, env, opts.requireSecrets ?? true, dirname(resolve(path))));
  if (problems.length > 0) {
    const unique = [...new Set(problems)];
    throw new FaultError(fault('CONFIG_INVALID', `config ${opts.source ?? path} is invalid:\n${unique.join('\n')}`));
  }
  const file = raw as ConfigFile;
  const base = dirname(resolve(path));
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const [host, port] = splitListen(file.server?.listen ?? '127.0.0.1:8080');

  const buckets = {} as Config['buckets'];
  for (const name of ENV_NAMES) {
    const b = file.buckets[name];
    if (b) buckets[name] = resolveBucket(b, abs, env);
  }
  return {
    source: opts.source ?? resolve(path),
    secretNames,
    server: {
      host,
      port,
      maxBodyBytes: file.server?.maxBodyBytes ?? 64 * 1024,
      bodyTimeoutMs: file.server?.bodyTimeoutMs ?? 10_000,
      drainMs: Math.round((file.server?.drainSeconds ?? 5) * 1000),
      ...(file.server?.trustedProxies?.length ? { trustedProxies: file.server.trustedProxies } : {}),
      ...adminSettings(file, env),
    },
    ...(file.statusPage?.rateLimit
      ? {
          statusPage: {
            rateLimit: rateOf(file.statusPage.rateLimit.requestsPerSecond, file.statusPage.rateLimit.requestBurst, 1),
          },
        }
      : {}),
    store: {
      dir: abs(file.store?.dir ?? 'var/db'),
      mapSizeBytes: Math.round((file.store?.mapSizeGiB ?? 64) * 1024 ** 3),
      changeFeedKeepMs: Math.round((file.updates?.changeFeedKeepDays ?? 90) * 86_400_000),
    },
    ingest: { ...DEFAULT_INGEST, ...stripUndefined(file.ingest ?? {}) },
    webhooks: {
      enabled: file.webhooks?.enabled ?? false,
      path: abs(file.webhooks?.path ?? 'var/webhooks'),
      servedBy: file.webhooks?.servedBy,
      allowHttp: file.webhooks?.allowHttp ?? false,
      allowPrivateTargets: file.webhooks?.allowPrivateTargets ?? false,
      concurrency: file.webhooks?.concurrency ?? 64,
      perIntegratorConcurrency: file.webhooks?.perIntegratorConcurrency ?? 8,
      maxSubscriptionsPerIntegrator: file.webhooks?.maxSubscriptionsPerIntegrator ?? 100,
      timeoutMs: file.webhooks?.timeoutMs ?? 10_000,
      retryBaseMs: file.webhooks?.retryBaseMs ?? 5_000,
      retryMaxMs: file.webhooks?.retryMaxMs ?? 3_600_000,
      retryForMs: Math.round((file.webhooks?.retryForHours ?? 72) * 3_600_000),
      pollMs: file.webhooks?.pollMs ?? 500,
      mapSizeBytes: Math.round((file.webhooks?.mapSizeGiB ?? 64) * 1024 ** 3),
      keepEventsMs: Math.round((file.webhooks?.keepEventsDays ?? 30) * 86_400_000),
      nice: file.webhooks?.nice ?? HARVEST_NICE,
      idle: file.webhooks?.idle ?? HARVEST_IDLE,
    },
    buckets,
    platforms: file.platforms.map((p) => ({
      name: p.name,
      entitlementUrl: p.entitlementUrl,
      entitlementSecret: p.entitlementSecretEnv ? env[p.entitlementSecretEnv] : undefined,
      entitlementTimeoutMs: p.entitlementTimeoutMs ?? DEFAULT_PLATFORM_ENTITLEMENT.entitlementTimeoutMs,
      entitlementConcurrency: p.entitlementConcurrency ?? DEFAULT_PLATFORM_ENTITLEMENT.entitlementConcurrency,
      entitlementBatch: p.entitlementBatch ?? DEFAULT_PLATFORM_ENTITLEMENT.entitlementBatch,
      entitlementCacheSeconds: p.entitlementCacheSeconds ?? DEFAULT_PLATFORM_ENTITLEMENT.entitlementCacheSeconds,
      ...(p.entitlementRatePerSecond === undefined
        ? {}
        : { entitlementRate: rateOf(p.entitlementRatePerSecond, p.entitlementRateBurst, 1) }),
      // an unset or empty variable serves no reports (--check-config and a start with secrets say so)
      ...(p.reportKeyEnv && env[p.reportKeyEnv] ? { reportKey: env[p.reportKeyEnv] } : {}),
    })),
    integrators: (file.integrators ?? []).flatMap((i) => {
      const { apiKey, previousApiKey } = integratorKeys(i, env);
      return apiKey === undefined
        ? []
        : [
            {
              name: i.name,
              apiKey,
              ...(previousApiKey ? { previousApiKey } : {}),
              updates: i.updates ?? false,
              cache: i.cache ?? true,
              counter: i.counter ?? false,
              ...(i.rateLimit === undefined ? {} : { rateLimit: integratorRateLimit(i.rateLimit) }),
            },
          ];
    }),
    entitlements: {
      name: file.entitlements?.name ?? DEFAULT_ENTITLEMENTS.name,
      ...(file.entitlements?.userAgent === undefined ? {} : { userAgent: file.entitlements.userAgent }),
      cacheMaxEntries: file.entitlements?.cacheMaxEntries ?? DEFAULT_ENTITLEMENTS.cacheMaxEntries,
      cacheMaxBytes: file.entitlements?.cacheMaxBytes ?? DEFAULT_ENTITLEMENTS.cacheMaxBytes,
      breakerFailures: file.entitlements?.breakerFailures ?? DEFAULT_ENTITLEMENTS.breakerFailures,
      breakerCooldownMs:
        file.entitlements?.breakerCooldownSeconds !== undefined
          ? Math.round(file.entitlements.breakerCooldownSeconds * 1000)
          : DEFAULT_ENTITLEMENTS.breakerCooldownMs,
      ...(file.entitlements?.lookup ? { lookup: lookupSettings(file.entitlements.lookup, env) } : {}),
    },
    updates: {
      dropDir: file.updates?.dropDir ? abs(file.updates.dropDir) : undefined,
      nice: file.updates?.nice ?? 10,
      urls: (file.updates?.urls ?? []).map((u) => {
        const everyMs = Math.round((u.everyMinutes ?? 1440) * 60_000);
        return { url: u.url, format: u.format, everyMs, staleAfterMs: staleAfter(u.staleAfterHours, everyMs) };
      }),
      crossref: (file.updates?.crossref ?? []).map((c) => {
        const everyMs = Math.round((c.everyMinutes ?? 60) * 60_000);
        const plusToken = c.plusTokenEnv ? env[c.plusTokenEnv] : undefined;
        return {
          name: c.name ?? 'crossref',
          url: (c.url ?? DEFAULT_CROSSREF_URL).replace(/\/+$/, ''),
          mailto: c.mailto,
          ...(plusToken ? { plusToken } : {}),
          ...(c.plusTokenEnv ? { plusTokenEnv: c.plusTokenEnv } : {}),
          everyMs,
          ...(c.from ? { from: c.from } : {}),
          rows: c.rows ?? 1000,
          fullEveryMs: Math.round((c.fullEveryDays ?? 7) * 86_400_000),
          staleAfterMs: staleAfter(c.staleAfterHours, everyMs),
          nice: c.nice ?? HARVEST_NICE,
          idle: c.idle ?? HARVEST_IDLE,
        };
      }),
    },
  };
}

/**
 * One schema error as printed lines. A union (a bucket block) that fails reports only "Expected union value";
 * when exactly one variant accepts the block's `kind`, that variant's own errors are listed instead, each
 * with its path (docs/design.md, "CLI and configuration": every fault printed with its path).
 */
function describeError(e: ValueError): string[] {
  if (e.type === ValueErrorType.Union) {
    const variants = e.errors.map((it) => [...it]);
    const chosen = variants.filter((errs) => !errs.some((x) => x.path === `${e.path}/kind`));
    if (chosen.length === 1 && chosen[0]!.length > 0) return chosen[0]!.flatMap(describeError);
  }
  // a pattern says little to an operator: a schema's `patternMeans` says it in words
  const means =
    e.type === ValueErrorType.StringPattern && typeof e.schema.patternMeans === 'string'
      ? e.schema.patternMeans
      : undefined;
  if (means !== undefined) return [`  ${e.path}: ${e.message} (${means})`];
  return [`  ${e.path || '/'}: ${e.message}`];
}

/** Rules the schema cannot say: uniqueness, either/or fields, environment variables that must be set. */
function semanticProblems(
  file: ConfigFile,
  env: Record<string, string | undefined>,
  requireSecrets: boolean,
  base: string,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  file.platforms.forEach((p, i) => {
    if (seen.has(p.name)) out.push(`  /platforms/${i}/name: platform "${p.name}" is registered twice`);
    seen.add(p.name);
    // GetFTR's publisher integration signs every call with a JWT: a platform endpoint without a secret is a mistake
    if (p.entitlementUrl !== undefined && p.entitlementSecretEnv === undefined)
      out.push(
        `  /platforms/${i}/entitlementSecretEnv: required with entitlementUrl (the JWT shared secret's environment variable)`,
      );
    if (p.entitlementUrl === undefined && p.entitlementSecretEnv !== undefined)
      out.push(`  /platforms/${i}/entitlementUrl: entitlementSecretEnv is given but no entitlementUrl to call`);
    if (p.entitlementRateBurst !== undefined && p.entitlementRatePerSecond === undefined)
      out.push(
        `  /platforms/${i}/entitlementRateBurst: given without entitlementRatePerSecond, the rate it is the burst of`,
      );
    if (requireSecrets && p.entitlementSecretEnv && (env[p.entitlementSecretEnv] ?? '') === '')
      out.push(
        `  /platforms/${i}/entitlementSecretEnv: environment variable ${p.entitlementSecretEnv} is not set or empty`,
      );
  });
  reportKeyProblems(file, env, requireSecrets, out);
  const names = new Set<string>();
  const keys = new Set<string>();
  (file.integrators ?? []).forEach((it, i) => {
    if (names.has(it.name)) out.push(`  /integrators/${i}/name: integrator "${it.name}" is configured twice`);
    names.add(it.name);
    // said, not left to one setting quietly winning over the other
    if (it.counter === true && it.cache === true)
      out.push(
        `  /integrators/${i}/cache: a counter integrator is never served from the answer cache; leave cache out, or false`,
      );
    out.push(...integratorRateProblems(it.rateLimit, `/integrators/${i}/rateLimit`));
    if ((it.apiKey === undefined) === (it.apiKeyEnv === undefined)) {
      out.push(`  /integrators/${i}: give exactly one of apiKey or apiKeyEnv`);
      return;
    }
    const { apiKey: key, previousApiKey: previous } = integratorKeys(it, env);
    if (key === undefined) {
      if (requireSecrets) out.push(`  /integrators/${i}/apiKeyEnv: environment variable ${it.apiKeyEnv} is not set`);
    } else if (key.length < 8)
      out.push(`  /integrators/${i}/apiKeyEnv: the key in ${it.apiKeyEnv} is shorter than 8 characters`);
    else if (keys.has(key)) out.push(`  /integrators/${i}: the same API key is given to two integrators`);
    if (key !== undefined) keys.add(key);
    if (it.previousApiKey !== undefined && it.previousApiKeyEnv !== undefined)
      out.push(`  /integrators/${i}: give at most one of previousApiKey or previousApiKeyEnv`);
    // an unset or empty previousApiKeyEnv is no fault: rotation ends by emptying or removing it
    if (previous === undefined) return;
    if (previous.length < 8)
      out.push(
        `  /integrators/${i}/previousApiKeyEnv: the key in ${it.previousApiKeyEnv} is shorter than 8 characters`,
      );
    else if (keys.has(previous)) out.push(`  /integrators/${i}: the previous API key is already in use as a key`);
    keys.add(previous);
  });
  for (const name of ENV_NAMES) {
    const b = file.buckets[name];
    if (b?.kind === 'local' && b.reports)
      out.push(`  /buckets/${name}/reports: reports are written back to S3 buckets only (kind = "s3")`);
    // the reports' folder is left out of the mirror, so no platform's deposits may live there
    if (b?.reports && file.platforms.some((p) => p.name === 'reports'))
      out.push(`  /buckets/${name}/reports: a platform named "reports" would share its folder with the reports`);
    if (b?.kind !== 's3') continue;
    if ((b.accessKeyIdEnv === undefined) !== (b.secretAccessKeyEnv === undefined))
      out.push(`  /buckets/${name}: give both accessKeyIdEnv and secretAccessKeyEnv, or neither`);
    for (const field of ['accessKeyIdEnv', 'secretAccessKeyEnv'] as const) {
      const v = b[field];
      if (requireSecrets && v !== undefined && env[v] === undefined)
        out.push(`  /buckets/${name}/${field}: environment variable ${v} is not set`);
    }
  }
  out.push(...bucketsApartProblems(file.buckets, base));
  (file.updates?.crossref ?? []).forEach((c, i) => {
    // every harvest keeps its updates in the one Crossref feed: a full run of one would withdraw what another brought
    if (i > 0)
      out.push(
        `  /updates/crossref/${i}: only one Crossref harvest may be configured (found ${file.updates!.crossref!.length}): harvests share one feed, so a full run of one would withdraw the updates only another brought`,
      );
    // a day of the calendar, as update sources' dates are read (Date.parse would roll 2020-02-30 over to March 1)
    if (c.from !== undefined && parseSourceDate(c.from) !== c.from)
      out.push(`  /updates/crossref/${i}/from: ${c.from} is not a date`);
    if (requireSecrets && c.plusTokenEnv !== undefined && (env[c.plusTokenEnv] ?? '') === '')
      out.push(`  /updates/crossref/${i}/plusTokenEnv: environment variable ${c.plusTokenEnv} is not set or empty`);
  });
  (file.server?.trustedProxies ?? []).forEach((proxy, i) => {
    if (parseAddressBlock(proxy) === undefined)
      out.push(
        `  /server/trustedProxies/${i}: ${JSON.stringify(proxy)} is not an address or a CIDR block (e.g. 10.0.0.0/8, 2001:db8::/32, ::1)`,
      );
  });
  const lookupTokenEnv = file.entitlements?.lookup?.plusTokenEnv;
  if (requireSecrets && lookupTokenEnv !== undefined && (env[lookupTokenEnv] ?? '') === '')
    out.push(`  /entitlements/lookup/plusTokenEnv: environment variable ${lookupTokenEnv} is not set or empty`);
  const port = Number((file.server?.listen ?? '127.0.0.1:8080').split(':').pop());
  if (port > 65535) out.push(`  /server/listen: port ${port} is out of range`);
  out.push(...adminProblems(file, env, requireSecrets));
  return out;
}

/** A token bucket's settings; its burst by default a second's worth, and at least `leastBurst`. */
function rateOf(perSecond: number, burst: number | undefined, leastBurst: number): RateSettings {
  return { perSecond, burst: burst ?? Math.max(leastBurst, Math.ceil(perSecond)) };
}

/** An integrator's rates; the DOI burst at least one full request, so that a default never refuses one for size. */
function integratorRateLimit(r: NonNullable<NonNullable<ConfigFile['integrators']>[number]['rateLimit']>) {
  return {
    ...(r.requestsPerSecond === undefined ? {} : { requests: rateOf(r.requestsPerSecond, r.requestBurst, 1) }),
    ...(r.doisPerSecond === undefined ? {} : { dois: rateOf(r.doisPerSecond, r.doiBurst, MAX_DOIS_PER_REQUEST) }),
  };
}

/** A rate limit that limits nothing, or a burst without its rate, is a mistake said, not a limit quietly absent. */
function integratorRateProblems(
  r: NonNullable<ConfigFile['integrators']>[number]['rateLimit'],
  path: string,
): string[] {
  if (r === undefined) return [];
  const out: string[] = [];
  if (r.requestsPerSecond === undefined && r.doisPerSecond === undefined)
    out.push(`  ${path}: give requestsPerSecond, doisPerSecond or both (an empty rateLimit limits nothing)`);
  if (r.requestBurst !== undefined && r.requestsPerSecond === undefined)
    out.push(`  ${path}/requestBurst: given without requestsPerSecond, the rate it is the burst of`);
  if (r.doiBurst !== undefined && r.doisPerSecond === undefined)
    out.push(`  ${path}/doiBurst: given without doisPerSecond, the rate it is the burst of`);
  return out;
}

/** `[entitlements.lookup]` resolved: defaults, the base address without a trailing slash, the token read. */
function lookupSettings(
  l: NonNullable<NonNullable<ConfigFile['entitlements']>['lookup']>,
  env: Record<string, string | undefined>,
): MetadataLookupSettings {
  const plusToken = l.plusTokenEnv ? env[l.plusTokenEnv] : undefined;
  return {
    url: (l.url ?? DEFAULT_CROSSREF_URL).replace(/\/+$/, ''),
    mailto: l.mailto,
    ...(plusToken ? { plusToken } : {}),
    ...(l.plusTokenEnv ? { plusTokenEnv: l.plusTokenEnv } : {}),
    timeoutMs: l.timeoutMs ?? DEFAULT_LOOKUP.timeoutMs,
    concurrency: l.concurrency ?? DEFAULT_LOOKUP.concurrency,
    cacheEntries: l.cacheEntries ?? DEFAULT_LOOKUP.cacheEntries,
  };
}

function staleAfter(hours: number | undefined, everyMs: number): number {
  return hours !== undefined ? Math.round(hours * 3600_000) : defaultStaleAfterMs(everyMs);
}

/** An integrator's key and the retired key still accepted (none when its variable is unset or empty). */
function integratorKeys(it: NonNullable<ConfigFile['integrators']>[number], env: Record<string, string | undefined>) {
  const previous = it.previousApiKey ?? (it.previousApiKeyEnv !== undefined ? env[it.previousApiKeyEnv] : undefined);
  return { apiKey: it.apiKey ?? env[it.apiKeyEnv!], previousApiKey: previous === '' ? undefined : previous };
}

function resolveBucket(
  b: ConfigFile['buckets']['production'],
  abs: (p: string) => string,
  env: Record<string, string | undefined>,
): BucketSettings {
  if (b.kind === 'local') return { kind: 'local', path: abs(b.path) };
  const credentials =
    b.accessKeyIdEnv &&
    b.secretAccessKeyEnv &&
    env[b.accessKeyIdEnv] !== undefined &&
    env[b.secretAccessKeyEnv] !== undefined
      ? { accessKeyId: env[b.accessKeyIdEnv]!, secretAccessKey: env[b.secretAccessKeyEnv]! }
      : undefined;
  return {
    kind: 's3',
    path: abs(b.path),
    endpoint: b.endpoint,
    region: b.region ?? 'us-east-1',
    bucket: b.bucket,
    prefix: normalisePrefix(b.prefix),
    forcePathStyle: b.forcePathStyle ?? false,
    credentials,
    credentialSource: credentials ? `${b.accessKeyIdEnv}/${b.secretAccessKeyEnv}` : 'the default AWS credential chain',
    pollMs: Math.round((b.pollSeconds ?? 30) * 1000),
    ...(b.reports ? { reports: true as const } : {}),
  };
}

function splitListen(listen: string): [string, number] {
  const i = listen.lastIndexOf(':');
  return [listen.slice(0, i), Number(listen.slice(i + 1))];
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The operator console's shortest key: it guards the ledger and every figure, and is typed by people. */
const ADMIN_KEY_MIN_LENGTH = 16;

/** The operator console's listener and key, when configured (its key only when its variable holds one). */
function adminSettings(
  file: ConfigFile,
  env: Record<string, string | undefined>,
): { admin?: { host: string; port: number }; adminKey?: string } {
  const listen = file.server?.adminListen;
  const keyEnv = file.server?.adminKeyEnv;
  const key = keyEnv !== undefined ? env[keyEnv] : undefined;
  const [host, port] = listen !== undefined ? splitListen(listen) : [];
  return {
    ...(host !== undefined ? { admin: { host, port: port! } } : {}),
    ...(key ? { adminKey: key } : {}),
  };
}

function adminProblems(file: ConfigFile, env: Record<string, string | undefined>, requireSecrets: boolean): string[] {
  const out: string[] = [];
  const { listen = '127.0.0.1:8080', adminListen, adminKeyEnv } = file.server ?? {};
  if (adminListen !== undefined) {
    const port = Number(adminListen.split(':').pop());
    if (port > 65535) out.push(`  /server/adminListen: port ${port} is out of range`);
    // port 0 (a free port, in tests) twice is two listeners
    if (adminListen === listen && !adminListen.endsWith(':0'))
      out.push(`  /server/adminListen: ${adminListen} is the public listener's address; give the operator's own`);
  }
  if (adminKeyEnv !== undefined) {
    const key = env[adminKeyEnv];
    if (requireSecrets && (key ?? '') === '')
      out.push(`  /server/adminKeyEnv: environment variable ${adminKeyEnv} is not set or empty`);
    else if (key && key.length < ADMIN_KEY_MIN_LENGTH)
      out.push(`  /server/adminKeyEnv: the key in ${adminKeyEnv} is shorter than ${ADMIN_KEY_MIN_LENGTH} characters`);
  }
  return out;
}

/**
 * Each platform's report key: set when secrets are required, 8 characters at least, and its own: a key two
 * platforms shared would read both platforms' reports.
 */
function reportKeyProblems(
  file: ConfigFile,
  env: Record<string, string | undefined>,
  requireSecrets: boolean,
  out: string[],
): void {
  const owners = new Map<string, string>();
  file.platforms.forEach((p, i) => {
    if (p.reportKeyEnv === undefined) return;
    const key = env[p.reportKeyEnv] ?? '';
    const at = `  /platforms/${i}/reportKeyEnv`;
    if (key === '') {
      if (requireSecrets) out.push(`${at}: environment variable ${p.reportKeyEnv} is not set or empty`);
      return;
    }
    if (key.length < 8) out.push(`${at}: the key in ${p.reportKeyEnv} is shorter than 8 characters`);
    const owner = owners.get(key);
    if (owner !== undefined)
      out.push(`${at}: the key in ${p.reportKeyEnv} is platform "${owner}"'s too; each platform needs its own`);
    owners.set(key, p.name);
  });
}
