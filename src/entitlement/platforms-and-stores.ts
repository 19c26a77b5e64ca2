import type { EntitlementSettings, PlatformSettings } from '../config/index.ts';
import type { Store } from '../store/index.ts';
import { hasEntitlementApi } from './configured-platforms.ts';
import { EntitlementService } from './entitlement-service.ts';
import { MetadataLookup } from './lookup/index.ts';
import { PlatformClient, PlatformFigures } from './platforms/index.ts';

/**
 * The entitlement side of the service: one client per platform with an Entitlement API (its breaker, cap and
 * figures are shared by every environment), and one EntitlementService per store.
 */
export class Entitlements {
  readonly clients = new Map<string, PlatformClient>();
  /** per platform name, from its first client on: a new client carries on the counts (dropped with the platform) */
  readonly figures = new Map<string, PlatformFigures>();
  private readonly services = new Map<Store, EntitlementService>();
  /** entries by metadata resolved at Crossref (`[entitlements.lookup]`), one for every environment */
  lookup: MetadataLookup | undefined;

  /** what durations are measured by (deadlines, breaker cool-downs, cache lifetimes): a clock the system's never steps back */
  readonly now: () => number;
  /** what a JWT's `iat` says: the time of day */
  private readonly timeOfDay: () => number;

  /** `clock`: a test's clock, standing for both */
  constructor(
    private platforms: readonly PlatformSettings[],
    private settings: EntitlementSettings,
    clock?: () => number,
  ) {
    this.now = clock ?? steadyNow;
    this.timeOfDay = clock ?? Date.now;
    this.setClients();
    this.setLookup();
  }

  /** A lookup for the settings; one whose settings did not change is kept, with its cache and its Crossref limits. */
  private setLookup(): void {
    const wanted = this.settings.lookup;
    if (JSON.stringify(wanted) !== JSON.stringify(this.lookup?.settings))
      this.lookup = wanted ? new MetadataLookup(wanted, this.settings.name) : undefined;
    for (const s of this.services.values()) s.lookup = this.lookup;
  }

  /**
   * A reloaded config (SIGHUP): a platform whose settings and caller settings are unchanged keeps its client (its
   * breaker state and calls in flight); a changed one gets a new client, which keeps counting its figures; a removed
   * one none, and its figures go. Requests in flight finish with the clients they started with.
   */
  reconfigure(platforms: readonly PlatformSettings[], settings: EntitlementSettings): void {
    const callerChanged = callerOf(settings) !== callerOf(this.settings);
    if (callerChanged) this.clients.clear();
    this.platforms = platforms;
    this.settings = settings;
    this.setClients();
    this.setLookup();
    for (const s of this.services.values()) s.reconfigure(platforms, settings);
  }

  private setClients(): void {
    const wanted = new Set<string>();
    for (const p of this.platforms) {
      if (!hasEntitlementApi(p)) continue;
      wanted.add(p.name);
      const settings = { ...p, entitlementUrl: p.entitlementUrl, entitlementSecret: p.entitlementSecret };
      const existing = this.clients.get(p.name);
      if (existing && JSON.stringify(existing.settings) === JSON.stringify(settings)) continue;
      let figures = this.figures.get(p.name);
      if (!figures) this.figures.set(p.name, (figures = new PlatformFigures()));
      const caller = {
        name: this.settings.name,
        userAgent: userAgentOf(this.settings),
        breakerFailures: this.settings.breakerFailures,
        breakerCooldownMs: this.settings.breakerCooldownMs,
        now: this.now,
        timeOfDay: this.timeOfDay,
      };
      this.clients.set(p.name, new PlatformClient(settings, caller, figures));
    }
    for (const name of this.clients.keys()) if (!wanted.has(name)) this.clients.delete(name);
    // a platform still configured (its Entitlement API taken away, for now) keeps its series; a removed one not
    const configured = new Set(this.platforms.map((p) => p.name));
    for (const name of this.figures.keys()) if (!configured.has(name)) this.figures.delete(name);
  }

  /** The service of a store, made on first use. */
  forStore(store: Store): EntitlementService {
    let s = this.services.get(store);
    if (!s) {
      s = new EntitlementService(store, this.platforms, this.clients, { ...this.settings, now: this.now });
      s.lookup = this.lookup;
      this.services.set(store, s);
    }
    return s;
  }

  close(): void {
    for (const s of this.services.values()) s.close();
    this.services.clear();
  }
}

/** What every client is made with besides its platform's settings. */
function callerOf(s: EntitlementSettings): string {
  return JSON.stringify([s.name, userAgentOf(s), s.breakerFailures, s.breakerCooldownMs]);
}

/** The user-agent of calls to platforms: the configured one, else `<name> Entitlement API`. */
function userAgentOf(s: EntitlementSettings): string {
  return s.userAgent ?? `${s.name} Entitlement API`;
}

/**
 * Milliseconds on the monotonic clock, from the time of day the process started: an NTP step or a resumed VM
 * moves Date.now by hours, and with it every breaker cool-down and cached answer's lifetime measured by it.
 */
function steadyNow(): number {
  return performance.timeOrigin + performance.now();
}
