import { Elysia } from 'elysia';
import { DEFAULT_ENTITLEMENTS, type EnvName, type IntegratorSettings } from '../config/index.ts';
import { Entitlements } from '../entitlement/index.ts';
import type { IngestStats } from '../ingest/index.ts';
import type { Store } from '../store/index.ts';
import { ApiKeys } from './auth.ts';
import { errorResponse, jsonResponse } from './errors.ts';
import { renderEntitlementMetrics } from './entitlement-metrics.ts';
import { renderMetrics, RequestCounters } from './metrics.ts';
import { openApiDocument } from './openapi.ts';
import { handleEntitlements, type EntitlementEnv } from './entitlements-route.ts';
import { PageCache } from './page-cache.ts';
import { handleStatusPage, STATUS_PAGE_PREFIX, type StatusEnv } from './status-route.ts';
import { handleUpdates } from './updates-route.ts';

export interface EnvHandles {
  store: Store;
  ingest?: IngestStats;
}

export interface HttpDeps {
  /** the integrators, or the key table the daemon replaces on reload */
  integrators: readonly IntegratorSettings[] | ApiKeys;
  maxBodyBytes: number;
  envs: { production: EnvHandles; staging?: EnvHandles };
  health: () => { ok: boolean; checks: Record<string, unknown> };
  version: string;
  /** platform clients and per-store services; none given: no platform has an Entitlement API */
  entitlements?: Entitlements;
  /** bytes of rendered status pages kept per environment (default PAGE_CACHE_MAX_BYTES; 0: none kept) */
  pageCacheBytes?: number;
  now?: () => number;
}

const UPDATE_PATHS = ['/v2.1/updates', '/v2.2/updates'];
const ENTITLEMENT_PATHS = ['/v2.1/entitlements', '/v2.2/entitlements'];

/**
 * The HTTP face (docs/design.md, "HTTP"). Operations routes (/healthz, /metrics, /openapi.json) carry no key: they
 * are for the operator's network, behind the proxy that faces integrators.
 */
export function createApp(deps: HttpDeps) {
  const keys = deps.integrators instanceof ApiKeys ? deps.integrators : new ApiKeys(deps.integrators);
  const requests = new RequestCounters();
  const openapi = JSON.stringify(openApiDocument(deps.version));
  const now = deps.now ?? Date.now;
  const entitlements = deps.entitlements ?? new Entitlements([], DEFAULT_ENTITLEMENTS);
  const entitlementEnv = (env: EnvName): EntitlementEnv | undefined => {
    const h = deps.envs[env];
    return h && { service: entitlements.forStore(h.store), updates: () => h.store.updatesIndex.table() };
  };
  const counted = (route: string, r: Response) => {
    requests.note(route, r.status);
    return r;
  };
  let app = new Elysia({ name: 'doi-holdings' }).onError(({ code, error }) => {
    if (code === 'NOT_FOUND') return counted('other', errorResponse(404, 'NOT_FOUND', 'no such route'));
    return counted('other', errorResponse(500, 'INTERNAL', `internal error: ${(error as Error).message ?? String(error)}`));
  });
  const notPost = (route: string) => (r: { request: Request }) =>
    counted(route, errorResponse(405, 'METHOD_NOT_ALLOWED', `${r.request.method} is not allowed on ${route}; use POST`, { allow: 'POST' }));
  for (const env of ['production', 'staging'] as EnvName[]) {
    const prefix = env === 'production' ? '' : '/staging';
    const answers = entitlementEnv(env);
    for (const path of ENTITLEMENT_PATHS) {
      const route = `${prefix}${path}`;
      app = app
        .post(route, async ({ request }) => counted(route, await handleEntitlements(request, keys, answers, deps.maxBodyBytes)), { parse: 'none' })
        .all(route, notPost(route));
    }
    for (const path of UPDATE_PATHS) {
      const route = `${prefix}${path}`;
      app = app
        .post(
          route,
          async ({ request }) =>
            counted(route, await handleUpdates(request, keys, deps.envs[env]?.store.updatesIndex, deps.maxBodyBytes)),
          { parse: 'none' },
        )
        .all(route, notPost(route));
    }
  }
  for (const env of ['production', 'staging'] as EnvName[]) {
    const prefix = env === 'production' ? '' : '/staging';
    const route = `${prefix}${STATUS_PAGE_PREFIX}{doi}`;
    const pattern: string = `${prefix}${STATUS_PAGE_PREFIX}*`;
    const store = deps.envs[env]?.store;
    const pages: StatusEnv | undefined = store && { store, pages: new PageCache(store, deps.pageCacheBytes) };
    app = app.all(pattern, ({ request }) => counted(route, handleStatusPage(request, prefix, pages)));
  }
  // a known operations path with another method is 405, not 404 (docs/interface.md, "Updates API")
  for (const route of ['/openapi.json', '/healthz', '/metrics'])
    app = app.all(route, ({ request }) =>
      counted(route, errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${route}; use GET`, { allow: 'GET' })),
    );
  return app
    .get('/openapi.json', () => jsonResponse(openapi))
    .get('/healthz', () => {
      const h = deps.health();
      return counted('/healthz', jsonResponse(JSON.stringify({ status: h.ok ? 'ok' : 'unhealthy', ...h.checks }), h.ok ? 200 : 503));
    })
    .get('/metrics', () => {
      const sources = (['production', 'staging'] as EnvName[]).flatMap((env) => {
        const h = deps.envs[env];
        return h ? [{ env, store: h.store, ingest: h.ingest, entitlement: entitlements.forStore(h.store) }] : [];
      });
      return new Response(renderMetrics(sources, requests, now()) + renderEntitlementMetrics(sources, entitlements.clients), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
    });
}

export type App = ReturnType<typeof createApp>;
