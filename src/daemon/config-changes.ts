import type { Config } from '../config/index.ts';

/**
 * What a reloaded config changes, split by whether the running daemon can take it (docs/operations.md, "Reload").
 * Names and field paths only: secrets are compared, never logged.
 */
interface ConfigChanges {
  /** settings that need a restart, as config paths (`server.listen`, `buckets.staging`, ...) */
  restartOnly: string[];
  integrators: NameChanges;
  platforms: NameChanges;
  /** the [entitlements] table (caller name, answer cache size, breaker) */
  entitlements: boolean;
  /** the [updates] table (drop folder, URLs) */
  updates: boolean;
}

interface NameChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

export function configChanges(old: Config, next: Config): ConfigChanges {
  const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const restartOnly: string[] = [];
  if (old.server.host !== next.server.host || old.server.port !== next.server.port) restartOnly.push('server.listen');
  if (old.server.maxBodyBytes !== next.server.maxBodyBytes) restartOnly.push('server.maxBodyBytes');
  if (old.server.bodyTimeoutMs !== next.server.bodyTimeoutMs) restartOnly.push('server.bodyTimeoutMs');
  if (old.server.drainMs !== next.server.drainMs) restartOnly.push('server.drainSeconds');
  if (differs(old.server.trustedProxies, next.server.trustedProxies)) restartOnly.push('server.trustedProxies');
  if (differs(old.statusPage, next.statusPage)) restartOnly.push('statusPage');
  if (old.server.admin?.host !== next.server.admin?.host || old.server.admin?.port !== next.server.admin?.port)
    restartOnly.push('server.adminListen');
  if (old.server.adminKey !== next.server.adminKey) restartOnly.push('server.adminKeyEnv');
  if (old.store.dir !== next.store.dir) restartOnly.push('store.dir');
  if (old.store.mapSizeBytes !== next.store.mapSizeBytes) restartOnly.push('store.mapSizeGiB');
  // kept in the [updates] table, but the store takes it when it opens (its change feed prunes by it)
  if (old.store.changeFeedKeepMs !== next.store.changeFeedKeepMs) restartOnly.push('updates.changeFeedKeepDays');
  if (differs(old.ingest, next.ingest)) restartOnly.push('ingest');
  for (const env of new Set([...Object.keys(old.buckets), ...Object.keys(next.buckets)]) as Set<
    keyof Config['buckets']
  >)
    if (differs(old.buckets[env], next.buckets[env])) restartOnly.push(`buckets.${env}`);
  // push alerts' store and deliveries are built once, at start
  if (differs(old.webhooks, next.webhooks)) restartOnly.push('webhooks');
  return {
    restartOnly,
    integrators: byName(old.integrators, next.integrators),
    platforms: byName(old.platforms, next.platforms),
    entitlements: differs(old.entitlements, next.entitlements),
    updates: differs(old.updates, next.updates),
  };
}

function byName<T extends { name: string }>(old: readonly T[], next: readonly T[]): NameChanges {
  const before = new Map(old.map((x) => [x.name, JSON.stringify(x)]));
  const after = new Map(next.map((x) => [x.name, JSON.stringify(x)]));
  return {
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed: [...after].filter(([n, v]) => before.has(n) && before.get(n) !== v).map(([n]) => n),
  };
}
