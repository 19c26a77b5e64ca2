import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeDaemonConfig } from './daemon-config.ts';
import { linkBucket } from './scale-data.ts';
import { SCALE_PLATFORMS } from './scale-records.ts';

/**
 * A store folder of the scale benchmark: `config.toml` (the 20 platforms; a free loopback port), the store under
 * `db/`, and `bucket/` holding hard links to the given files of the data set. The CLI and the daemon use the same
 * config: --ingest reads the files in place, and a daemon started later finds every one of them applied.
 * Two integrators: the Updates API's key (updates = true) and the Entitlement API's (updates = false, as
 * bench/entitlements.ts, so its answers carry no update lists).
 */

export const UPDATES_KEY = 'bench-updates-key-0123456789';
export const ENTITLEMENTS_KEY = 'bench-entitlements-key-0123456789';

export interface StoreFolder {
  dir: string;
  config: string;
  /** the path of a bucket key in this folder's bucket */
  path(key: string): string;
}

export function storeFolder(
  dir: string,
  data: string,
  keys: readonly string[],
  mapSizeGiB: number,
  passFiles?: number,
): StoreFolder {
  mkdirSync(join(dir, 'bucket'), { recursive: true });
  linkBucket(data, join(dir, 'bucket'), keys);
  const config = join(dir, 'config.toml');
  writeDaemonConfig(config, {
    mapSizeGiB,
    bucket: 'bucket',
    platforms: SCALE_PLATFORMS.map((name) => ({ name })),
    apiKey: UPDATES_KEY,
    updates: true,
    extra: `[[integrators]]\nname = "bench-entitlements"\napiKey = "${ENTITLEMENTS_KEY}"\nupdates = false\n${passFiles === undefined ? '' : `\n[ingest]\npassFiles = ${passFiles}\n`}`,
  });
  return { dir, config, path: (key) => join(dir, 'bucket', key) };
}
