import { Elysia } from 'elysia';
import { Registry } from 'prom-client';
import { type Logger, silentLogger } from '../base/index.ts';
import { DEFAULT_ENTITLEMENTS, type EnvName, type IntegratorSettings, type RateSettings } from '../config/index.ts';
import type { OperatorConsole } from '../console/index.ts';
import { Entitlements } from '../entitlement/index.ts';
import type { IngestStats } from '../ingest/index.ts';
import type { Store } from '../store/index.ts';
import { type EntitlementEnv, handleEntitlements } from './entitlements/index.ts';
import { AddressLimits, ClientAddresses, IntegratorLimits } from './limits/index.ts';
import {
  HttpMetrics,
  registerEntitlementMetrics,
  registerLimitMetrics,
  registerStoreMetrics,
  registerWebhookMetrics,
  scrape,
} from './metrics/index.ts';
import { openApiDocument } from './openapi/index.ts';
import {
  ApiKeys,
  CONSOLE_PREFIX,
  ConsoleKey,
  DEPOSITS_PREFIX,
  DirectRoutes,
  handleByPrefix,
  handleChanges,
  handleConsole,
  handleDepositReports,
  handlePrefixes,
  handleStatusPage,
  handleSubscriptions,
  handleUpdates,
  type KeyedAnswer,
  keyedPost,
  PageCache,
  ReportKeys,
  type RouteHandler,
  STATUS_PAGE_PREFIX,
  type StatusEnv,
  SUBSCRIPTIONS_PATH,
  type SubscriptionsHere,
  setDirectRoutes,
} from './routes/index.ts';
import { type BodyLimits, DEFAULT_BODY_TIMEOUT_MS, errorResponse, jsonResponse } from './wire/index.ts';

export interface EnvHandles {
  store: Store;
  ingest?: IngestStats;
}

export interface HttpDeps {
  /** the integrators, or the key table the daemon replaces on reload */
  integrators: readonly IntegratorSettings[] | ApiKeys;
  maxBodyBytes: number;
  /** how long a request body may take to arrive whole (default DEFAULT_BODY_TIMEOUT_MS), then 408 */
  bodyTimeoutMs?: number;
  envs: { production: EnvHandles; staging?: EnvHandles };
  /** /healthz: 200 when ok; otherwise 503 naming each failed check (`failed`) */
  health: () => { ok: boolean; failed?: string[]; warnings?: string[]; checks: Record<string, unknown> };
  /**
   * /readyz: 200 when the answers are right (every store open, not shutting down); otherwise 503 naming what is not
   * ready (`failed`). None given: an app with no daemon behind it is ready whenever it answers.
   */
  ready?: () => { ok: boolean; failed: string[] };
  /** the daemon's prom-client registry (process figures, ingest lag, S3 and update sources), rendered after the HTTP figures */
  registry?: Registry;
  /** where a 5xx is logged */
  log?: Logger;
  version: string;
  /** platform clients and per-store services; none given: no platform has an Entitlement API */
  entitlements?: Entitlements;
  /** the integrators' rate limits (default: made here, on the monotonic clock) */
  integratorLimits?: IntegratorLimits;
  /** the status page's pages a second per reader (`[statusPage] rateLimit`); absent: no limit */
  statusPageRate?: RateSettings;
  /** proxies whose X-Forwarded-For is believed for a reader's address (`server.trustedProxies`) */
  trustedProxies?: readonly string[];
  /** the platforms' report keys (deposit reports), or the table the daemon replaces on reload; none: no reports */
  reportKeys?: ReportKeys;
  /** bytes of rendered status pages kept per environment (default PAGE_CACHE_MAX_BYTES; 0: none kept) */
  pageCacheBytes?: number;
  now?: () => number;
  /**
   * The operator console on this (public) listener: only with its key, which every request to it must carry. Without
   * a key it is served on the operator's own listener (console-app.ts), never here.
   */
  console?: { view: OperatorConsole; key: string };
  /** push alerts: this replica's webhooks (undefined: another replica delivers; its routes answer 503) */
  subscriptions?: SubscriptionsHere;
}

const UPDATE_PATHS = ['/v2.1/updates', '/v2.2/updates'];
const ENTITLEMENT_PATHS = ['/v2.1/entitlements', '/v2.2/entitlements'];
/** the operations routes: GET (and HEAD) only, no key */
const OPERATIONS_ROUTES = ['/openapi.json', '/livez', '/readyz', '/healthz', '/metrics'];
const LIVE = JSON.stringify({ status: 'live' });
const READY = JSON.stringify({ status: 'ready' });

/**
 * The HTTP face (docs/design.md, "HTTP"). Operations routes (/livez, /readyz, /healthz, /metrics, /openapi.json)
 * carry no key: they are for the operator's network, behind the proxy that faces integrators.
 */
export function createApp(deps: HttpDeps) {
  const keys = deps.integrators instanceof ApiKeys ? deps.integrators : new ApiKeys(deps.integrators);
  const http = new HttpMetrics(deps.log ?? silentLogger);
  const openapi = JSON.stringify(openApiDocument(deps.version));
  const ready = deps.ready ?? (() => ({ ok: true, failed: [] }));
  const now = deps.now ?? Date.now;
  const body: BodyLimits = { maxBytes: deps.maxBodyBytes, timeoutMs: deps.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS };
  const entitlements = deps.entitlements ?? new Entitlements([], DEFAULT_ENTITLEMENTS);
  // one registry: the stores', the entitlement side's and HTTP's families, then the daemon's (process, ingest lag,
  // S3, update sources), every one read at each scrape
  const metricSources = (['production', 'staging'] as EnvName[]).flatMap((env) => {
    const h = deps.envs[env];
    return h ? [{ env, store: h.store, ingest: h.ingest, entitlement: entitlements.forStore(h.store) }] : [];
  });
  const integratorLimits = deps.integratorLimits ?? new IntegratorLimits();
  const readerLimits =
    deps.statusPageRate && new AddressLimits(deps.statusPageRate, new ClientAddresses(deps.trustedProxies));
  const own = new Registry();
  registerStoreMetrics(own, metricSources, now);
  registerEntitlementMetrics(own, metricSources, entitlements.clients, entitlements.figures);
  registerLimitMetrics(own, integratorLimits, readerLimits);
  http.register(own);
  if (deps.subscriptions?.webhooks) registerWebhookMetrics(own, deps.subscriptions.webhooks);
  const registry = deps.registry ? Registry.merge([own, deps.registry]) : own;
  const entitlementEnv = (env: EnvName): EntitlementEnv | undefined => {
    const h = deps.envs[env];
    return (
      h && {
        service: entitlements.forStore(h.store),
        updates: () => h.store.updatesIndex.table(),
        limits: integratorLimits,
      }
    );
  };
  /**
   * A request that matched no route, or whose handler threw: counted under its route's name when a route's handler
   * threw (timed from its start), else as `other` (only the error handling timed).
   */
  const failed = (request: Request, r: Response, error?: unknown, route = 'other', startedAt = performance.now()) => {
    http.note(
      request,
      route,
      r.status,
      startedAt,
      error === undefined ? undefined : { error: String((error as Error | null)?.stack ?? error) },
    );
    return r;
  };
  const threw = (request: Request, error: unknown, route?: string, startedAt?: number) =>
    failed(
      request,
      errorResponse(
        500,
        'INTERNAL',
        `internal error: ${(error as Error | null | undefined)?.message ?? String(error)}`,
      ),
      error,
      route,
      startedAt,
    );
  /**
   * A route's handler, timed and counted under the route's name (not the path: DOIs would make every path a
   * series), answering its own throw or rejection with the app's 500: one handler whether Elysia or Bun's router
   * calls it (direct-routes.ts), and one promise step per request (each step is a measurable share of a small one).
   */
  const timed =
    (route: string, handle: RouteHandler): RouteHandler =>
    (request) => {
      const startedAt = performance.now();
      let r: Response | Promise<Response>;
      try {
        r = handle(request);
      } catch (e) {
        return threw(request, e, route, startedAt);
      }
      // a synchronous answer stays synchronous: a promise costs Elysia and Bun a slower path per request
      if (r instanceof Promise)
        return r.then(
          (res) => {
            http.note(request, route, res.status, startedAt);
            return res;
          },
          (e: unknown) => threw(request, e, route, startedAt),
        );
      http.note(request, route, r.status, startedAt);
      return r;
    };
  const direct = new DirectRoutes();
  /** A handler as Elysia calls it, with its context. */
  const forElysia =
    (h: RouteHandler) =>
    ({ request }: { request: Request }) =>
      h(request);
  /** A static API route's handler, timed, for Elysia; the same handler is given to Bun's router (direct-routes.ts). */
  const served = (method: 'GET' | 'POST', route: string, handle: RouteHandler) => {
    const h = timed(route, handle);
    direct.add(method, route, h);
    return forElysia(h);
  };
  let app = new Elysia({ name: 'doi-holdings' }).onError(({ code, error, request }) =>
    code === 'NOT_FOUND' ? failed(request, errorResponse(404, 'NOT_FOUND', 'no such route')) : threw(request, error),
  );
  // a GET route answers HEAD too (as GET without the body), so its 405 names both
  const notAllowed = (route: string, method: 'GET' | 'POST') => {
    const allowed = method === 'GET' ? 'GET, HEAD' : method;
    return forElysia(
      timed(route, (request) =>
        errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${route}; use ${allowed}`, {
          allow: allowed,
        }),
      ),
    );
  };
  for (const env of ['production', 'staging'] as EnvName[]) {
    const prefix = env === 'production' ? '' : '/staging';
    const answers = entitlementEnv(env);
    // the keyed POST routes; another method is a 405 naming POST
    const keyedRoutes = (paths: readonly string[], answer: KeyedAnswer) => {
      for (const path of paths) {
        const route = `${prefix}${path}`;
        app = app
          .post(route, served('POST', route, keyedPost(keys, body, answer)), { parse: 'none' })
          .all(route, notAllowed(route, 'POST'));
      }
    };
    keyedRoutes(ENTITLEMENT_PATHS, (integrator, bytes) => handleEntitlements(integrator, bytes, answers));
    keyedRoutes(UPDATE_PATHS, (_, bytes) => handleUpdates(bytes, deps.envs[env]?.store.updatesIndex));
    // the change feed and the private lookup (v2.2 only: they are ours, not GetFTR's)
    const store = deps.envs[env]?.store;
    const feed = `${prefix}/v2.2/updates`;
    app = app
      .get(
        `${feed}/changes`,
        served('GET', `${feed}/changes`, (request) => handleChanges(request, keys, store)),
      )
      .all(`${feed}/changes`, notAllowed(`${feed}/changes`, 'GET'))
      .get(
        `${feed}/prefixes`,
        served('GET', `${feed}/prefixes`, (request) => handlePrefixes(request, keys, store)),
      )
      .all(`${feed}/prefixes`, notAllowed(`${feed}/prefixes`, 'GET'))
      .post(
        `${feed}/by-prefix`,
        served('POST', `${feed}/by-prefix`, (request) => handleByPrefix(request, keys, store, body)),
        { parse: 'none' },
      )
      .all(`${feed}/by-prefix`, notAllowed(`${feed}/by-prefix`, 'POST'));
  }
  for (const env of ['production', 'staging'] as EnvName[]) {
    const prefix = env === 'production' ? '' : '/staging';
    const route = `${prefix}${STATUS_PAGE_PREFIX}{doi}`;
    const pattern: string = `${prefix}${STATUS_PAGE_PREFIX}*`;
    const store = deps.envs[env]?.store;
    const pages: StatusEnv | undefined = store && { store, pages: new PageCache(store, deps.pageCacheBytes) };
    app = app.all(
      pattern,
      forElysia(timed(route, (request) => handleStatusPage(request, prefix, pages, readerLimits))),
    );
  }
  if (deps.console) {
    const { view } = deps.console;
    const key = new ConsoleKey(deps.console.key);
    const page = forElysia(timed(CONSOLE_PREFIX, (request) => handleConsole(request, view, key)));
    // typed as plain strings, as the status pages' patterns: the app's type stays the same whatever is added
    for (const path of [CONSOLE_PREFIX, `${CONSOLE_PREFIX}/*`] as string[]) app = app.all(path, page);
  }
  // deposit reports: a platform's own files, with its report key (deposit-reports-route.ts)
  const reportKeys = deps.reportKeys ?? new ReportKeys([]);
  for (const env of ['production', 'staging'] as EnvName[]) {
    const prefix = env === 'production' ? '' : '/staging';
    const route = `${prefix}${DEPOSITS_PREFIX}{name}/deposits`;
    const where = { env, store: deps.envs[env]?.store };
    const pattern: string = `${prefix}${DEPOSITS_PREFIX}*`; // a string, as the status page's: one Elysia type
    app = app.all(
      pattern,
      forElysia(timed(route, (request) => handleDepositReports(request, prefix, reportKeys, where))),
    );
  }
  // push alerts' subscriptions (production only): one handler sorts out the paths and methods under the prefix
  const subscriptions = forElysia(
    timed(SUBSCRIPTIONS_PATH, (request) =>
      handleSubscriptions(request, keys, deps.subscriptions ?? { webhooks: undefined }, body),
    ),
  );
  // typed as plain strings, as the status pages' pattern: Elysia's route types need not list them
  const [subscriptionsPath, subscriptionsPattern]: string[] = [SUBSCRIPTIONS_PATH, `${SUBSCRIPTIONS_PATH}/*`];
  app = app.all(subscriptionsPath!, subscriptions).all(subscriptionsPattern!, subscriptions);
  // a known operations path with another method is 405, not 404 (docs/interface.md, "Updates API")
  for (const route of OPERATIONS_ROUTES) app = app.all(route, notAllowed(route, 'GET'));
  const whole = app
    .get(
      '/openapi.json',
      served('GET', '/openapi.json', () => jsonResponse(openapi)),
    )
    // liveness: the process answers; nothing else is looked at (a restart would not mend anything else)
    .get(
      '/livez',
      served('GET', '/livez', () => jsonResponse(LIVE)),
    )
    // readiness: whether a load balancer should send requests here; a warming index or stuck ingestion still is
    .get(
      '/readyz',
      served('GET', '/readyz', () => {
        const r = ready();
        return r.ok
          ? jsonResponse(READY)
          : jsonResponse(JSON.stringify({ status: 'not ready', failed: r.failed }), 503);
      }),
    )
    .get(
      '/healthz',
      served('GET', '/healthz', () => {
        const h = deps.health();
        // a warning (a stale update source) is amber: still 200, since the replica answers correctly from what it holds
        const status = !h.ok ? 'unhealthy' : h.warnings?.length ? 'warning' : 'ok';
        const body = {
          status,
          version: deps.version,
          ...(h.failed?.length ? { failed: h.failed } : {}),
          ...(h.warnings?.length ? { warnings: h.warnings } : {}),
          ...h.checks,
        };
        return jsonResponse(JSON.stringify(body), h.ok ? 200 : 503);
      }),
    )
    .get(
      '/metrics',
      served('GET', '/metrics', async () => {
        const text = await scrape(registry);
        return new Response(text, { headers: { 'content-type': registry.contentType } });
      }),
    );
  setDirectRoutes(whole, direct);
  return whole;
}

export type App = ReturnType<typeof createApp>;
