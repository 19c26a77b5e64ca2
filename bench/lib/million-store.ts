import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLE_PATH } from '../../test/support/rw-sample.ts';
import { writeDaemonConfig } from './daemon-config.ts';
import { PLATFORM_NAMES } from './deposit-generator.ts';
import { BENCH_DIR, ingestData, REPO } from './ingest-data.ts';
import { sh } from './shell.ts';

/**
 * The store of ~1M live holdings bench/operations.ts uses, from the same cache (.bench/operations-store-v1/1m:
 * the ingest benchmark's deposits, parts (a) and (b), 120 files applied with --ingest, plus the Retraction Watch
 * sample imported), built the same way when missing. The cache is only read: a benchmark that writes works on a
 * copy (copyStore).
 */
export const MILLION_STORE = join(BENCH_DIR, 'operations-store-v1', '1m');
export const BENCH_KEY = 'bench-key-0123456789';
const MAIN = join(REPO, 'src/main.ts');

async function cli(args: string[], what: string, okCodes = [0]): Promise<void> {
  const r = await sh([process.execPath, MAIN, ...args]);
  if (!okCodes.includes(r.code)) throw new Error(`${what} failed (exit ${r.code}): ${r.out.slice(-2000)}`);
}

/** The cached 1M store's folder (holding config.toml, db/ and an empty bucket/), built when missing. */
export async function millionStore(): Promise<string> {
  const dir = MILLION_STORE;
  const config = join(dir, 'config.toml');
  if (existsSync(join(dir, 'ready'))) return dir;
  const { dir: data, manifest } = await ingestData();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'bucket'), { recursive: true });
  writeDaemonConfig(config, {
    mapSizeGiB: 16,
    bucket: 'bucket',
    platforms: PLATFORM_NAMES.map((n) => ({ name: n })),
    apiKey: BENCH_KEY,
    updates: true,
  });
  console.log(
    'building the 1M store: --ingest of 120 deposit files and --import-updates of the Retraction Watch sample ...',
  );
  await cli(
    ['--ingest', ...[...manifest.a, ...manifest.b].map((k) => join(data, 'bucket', k)), '--config', config],
    '--ingest',
  );
  await cli(['--import-updates', SAMPLE_PATH, '--config', config], '--import-updates', [0, 1]);
  writeFileSync(join(dir, 'ready'), '');
  return dir;
}

/**
 * A copy of a store folder's db/ at `to`, with an empty bucket/ and a daemon config (config.toml, the store under
 * db/ beside it); writeConfig rewrites it with further TOML (`extra`), or writes another config file beside it.
 */
export function copyStore(
  from: string,
  to: string,
): { dir: string; config: string; writeConfig(extra?: string, file?: string): string } {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(join(to, 'bucket'), { recursive: true });
  cpSync(join(from, 'db'), join(to, 'db'), { recursive: true });
  const config = join(to, 'config.toml');
  const writeConfig = (extra?: string, file = 'config.toml') => {
    writeDaemonConfig(join(to, file), {
      mapSizeGiB: 16,
      bucket: 'bucket',
      platforms: PLATFORM_NAMES.map((n) => ({ name: n })),
      apiKey: BENCH_KEY,
      updates: true,
      extra,
    });
    return join(to, file);
  };
  writeConfig();
  return { dir: to, config, writeConfig };
}
