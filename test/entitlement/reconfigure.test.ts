import { expect, test } from 'bun:test';
import { DEFAULT_ENTITLEMENTS, DEFAULT_PLATFORM_ENTITLEMENT, type PlatformSettings } from '../../src/config/index.ts';
import { Entitlements } from '../../src/entitlement/index.ts';
import { Store } from '../../src/store/index.ts';
import { tempDir } from '../support/fixtures.ts';

/** A reload's platforms (Entitlements.reconfigure): unchanged clients keep their state, changed ones start afresh. */

const platform = (name: string, url?: string): PlatformSettings => ({
  name,
  ...DEFAULT_PLATFORM_ENTITLEMENT,
  ...(url ? { entitlementUrl: url, entitlementSecret: `${name}-secret` } : {}),
});

test('an unchanged platform keeps its client and breaker; a changed one gets a new client; a removed one none', async () => {
  const dir = tempDir();
  const store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 26 });
  try {
    const e = new Entitlements(
      [
        platform('acme', 'http://127.0.0.1:9/a'),
        platform('beta', 'http://127.0.0.1:9/b'),
        platform('gamma', 'http://127.0.0.1:9/c'),
      ],
      DEFAULT_ENTITLEMENTS,
    );
    const service = e.forStore(store);
    const acme = e.clients.get('acme')!;
    acme.figures.calls.error = 7;
    service.cache.set('acme', '10.1234/k', 'org', { entitled: 'yes' }, 60_000);
    expect(service.cache.size).toBe(1);
    e.reconfigure(
      [
        platform('acme', 'http://127.0.0.1:9/a'),
        platform('beta', 'http://127.0.0.1:9/b2'),
        platform('gamma'),
        platform('delta', 'http://127.0.0.1:9/d'),
      ],
      DEFAULT_ENTITLEMENTS,
    );
    expect(e.clients.get('acme')).toBe(acme);
    expect(e.clients.get('acme')!.figures.calls.error).toBe(7);
    expect(e.clients.get('beta')!.settings.entitlementUrl).toBe('http://127.0.0.1:9/b2');
    expect(e.clients.has('gamma')).toBe(false); // no Entitlement API any more: its paid DOIs answer publisher_not_supported
    expect(e.clients.has('delta')).toBe(true);
    expect(e.forStore(store)).toBe(service);
    expect(service.cache.size).toBe(0); // an answer given under the old settings is not served under the new

    // another caller name or breaker: every client is made again
    e.reconfigure([platform('acme', 'http://127.0.0.1:9/a')], { ...DEFAULT_ENTITLEMENTS, breakerFailures: 2 });
    expect(e.clients.get('acme')).not.toBe(acme);
    expect([...e.clients.keys()]).toEqual(['acme']);

    // a new cache size replaces the service's answer cache
    const cache = service.cache;
    e.reconfigure([platform('acme', 'http://127.0.0.1:9/a')], {
      ...DEFAULT_ENTITLEMENTS,
      breakerFailures: 2,
      cacheMaxEntries: 10,
    });
    expect(service.cache).not.toBe(cache);
    expect(service.cache.maxEntries).toBe(10);
    e.close();
  } finally {
    await store.close();
    dir.remove();
  }
});
