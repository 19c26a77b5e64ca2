import { writeFileSync } from 'node:fs';

/** One platform of a benchmark daemon's config: its name, and TOML lines of its own settings if any. */
export interface BenchPlatform {
  name: string;
  settings?: string[];
}

/**
 * Writes the config the HTTP benchmarks run the daemon on: a free loopback port, the store under `db` beside the
 * config, one local production bucket, the platforms, one integrator, and any further TOML (`extra`).
 */
export function writeDaemonConfig(
  path: string,
  o: {
    mapSizeGiB: number;
    bucket: string;
    platforms: readonly BenchPlatform[];
    apiKey: string;
    updates: boolean;
    extra?: string;
  },
): void {
  const platforms = o.platforms
    .map((p) => ['[[platforms]]', `name = "${p.name}"`, ...(p.settings ?? [])].join('\n'))
    .join('\n');
  writeFileSync(
    path,
    `[server]
listen = "127.0.0.1:0"
[store]
dir = "db"
mapSizeGiB = ${o.mapSizeGiB}
[buckets.production]
kind = "local"
path = "${o.bucket}"
${platforms}
[[integrators]]
name = "bench"
apiKey = "${o.apiKey}"
updates = ${o.updates}
${o.extra ?? ''}`,
  );
}
