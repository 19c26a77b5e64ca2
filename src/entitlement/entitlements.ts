import type { EntitlementSettings, PlatformSettings } from '../config/index.ts';
import type { Store } from '../store/index.ts';
import { PlatformClient } from './platform-client.ts';
import { EntitlementService } from './service.ts';

/**
 * The entitlement side of the service: one client per platform with an Entitlement API (its breaker, cap and
 * figures are shared by every environment), and one EntitlementService per store.
 */
export class Entitlements {
  readonly clients = new Map<string, PlatformClient>();
  private readonly services = new Map<Store, EntitlementService>();

  constructor(
    readonly platforms: readonly PlatformSettings[],
    readonly settings: EntitlementSettings,
    readonly now: () => number = Date.now,
  ) {
    for (const p of platforms) {
      if (p.entitlementUrl === undefined || p.entitlementSecret === undefined) continue;
      this.clients.set(
        p.name,
        new PlatformClient({ ...p, entitlementUrl: p.entitlementUrl, entitlementSecret: p.entitlementSecret }, {
          name: settings.name,
          breakerFailures: settings.breakerFailures,
          breakerCooldownMs: settings.breakerCooldownMs,
          now,
        }),
      );
    }
  }

  /** The service of a store, made on first use. */
  forStore(store: Store): EntitlementService {
    let s = this.services.get(store);
    if (!s) {
      s = new EntitlementService(store, this.platforms, this.clients, { cacheMaxEntries: this.settings.cacheMaxEntries, now: this.now });
      this.services.set(store, s);
    }
    return s;
  }

  close(): void {
    for (const s of this.services.values()) s.close();
    this.services.clear();
  }
}
