import { DEFAULT_ENTITLEMENTS } from '../../src/config/index.ts';
import { OperatorConsole } from '../../src/console/index.ts';
import { Entitlements } from '../../src/entitlement/index.ts';
import { type FileEntry, Store } from '../../src/store/index.ts';
import { platformSettings } from '../http/http-support.ts';
import { tempDir } from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';
import { preparedFile } from '../support/prepared-file.ts';

/**
 * Real stores (production and staging, LMDB in a temporary folder) holding what the console shows: files applied on
 * several days (one with rejected lines), a quarantined file and a same-name conflict whose names and messages are
 * hostile markup, and a platform with an Entitlement API (a real one on loopback) the entitlement tests call.
 */

export const SECRET = 'a-shared-secret-of-the-platform-0123456789';
export const NOW = Date.UTC(2026, 10, 28, 15, 30);
const DAY = 86_400_000;
export const HOSTILE_KEY =
  'acme/"><script>globalThis.__xss=1</script><img src=x onerror="globalThis.__xss=2">.jsonl.gz';
export const HOSTILE_MESSAGE = '<b>bold</b> & <script>globalThis.__xss=3</script>';
/** a rejected line's DOI, shown in its reason */
export const REJECTED_DOI = '<i>not-a-doi</i>';

export interface ConsoleFixture {
  dir: ReturnType<typeof tempDir>;
  production: Store;
  staging: Store;
  platform: PlatformServer;
  entitlements: Entitlements;
  /** the file applied with rejected lines, and the one that conflicts later */
  rejectedFile: FileEntry;
  conflictedKey: string;
  /** files applied per day (UTC) in production */
  perDay: Record<string, number>;
  close(): Promise<void>;
}

const settings = platformSettings;

export async function consoleFixture(): Promise<ConsoleFixture> {
  const dir = tempDir('doi-holdings-console-');
  const production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 28 });
  const staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 28 });
  const platform = new PlatformServer(SECRET);
  const at = (ms: number) => () => new Date(ms);
  const perDay: Record<string, number> = {};
  const apply = (store: Store, lines: object[], platformName: string, recordedAt: number) => {
    const f = preparedFile(lines, { platform: platformName, time: recordedAt - 60_000 });
    const [status] = store.applyFilesSync([f], at(recordedAt));
    if (status?.status !== 'applied') throw new Error(`not applied: ${JSON.stringify(status)}`);
    if (store === production) {
      const day = new Date(recordedAt).toISOString().slice(0, 10);
      perDay[day] = (perDay[day] ?? 0) + 1;
    }
    return { file: f, entry: status.entry };
  };
  // 40 days ago: outside the chart
  apply(production, [{ doi: '10.5555/old-1', accessType: 'paid' }], 'acme', NOW - 40 * DAY);
  apply(production, [{ doi: '10.5555/a-1', accessType: 'paid' }], 'acme', NOW - 3 * DAY);
  apply(production, [{ doi: '10.5555/a-2', accessType: 'open' }], 'acme', NOW - 3 * DAY + 1000);
  const conflicted = apply(production, [{ doi: '10.5555/b-1', accessType: 'free' }], 'beta', NOW - DAY);
  const rejected = apply(
    production,
    [
      { doi: '10.5555/paid-1', accessType: 'paid' },
      { doi: REJECTED_DOI, accessType: 'paid' },
      { doi: '10.5555/bad-access', accessType: 'sometimes' },
    ],
    'paid',
    NOW - 60_000,
  );
  // the same name again with other content: a conflict, never applied
  const again = { ...preparedFile([{ doi: '10.5555/b-1', accessType: 'paid' }], { platform: 'beta' }) };
  production.applyFilesSync([{ ...again, key: conflicted.file.key, hash: 'other-content' }], at(NOW - 30_000));
  await production.quarantineFile(
    { key: HOSTILE_KEY, platform: 'acme', size: 10, hash: 'abc', lastModified: NOW - 120_000 },
    { code: 'NOT_GZIP', message: HOSTILE_MESSAGE },
    { tries: 1, now: at(NOW - 20_000) },
  );
  apply(staging, [{ doi: '10.5555/staging-1', accessType: 'open' }], 'acme', NOW - 5000);
  const entitlements = new Entitlements(
    [settings('acme'), settings('beta'), settings('paid', { entitlementUrl: platform.url, entitlementSecret: SECRET })],
    DEFAULT_ENTITLEMENTS,
  );
  return {
    dir,
    production,
    staging,
    platform,
    entitlements,
    rejectedFile: rejected.entry,
    conflictedKey: conflicted.file.key,
    perDay,
    close: async () => {
      entitlements.close();
      await platform.stop();
      await production.close();
      await staging.close();
      dir.remove();
    },
  };
}

export function fixtureConsole(f: ConsoleFixture, now = NOW): OperatorConsole {
  return new OperatorConsole({
    version: '9.9.9-test',
    envs: { production: { store: f.production }, staging: { store: f.staging } },
    entitlements: f.entitlements,
    command: 'doi-holdings --config /etc/doi-holdings/doi-holdings.toml',
    now: () => now,
  });
}
