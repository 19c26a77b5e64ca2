import type { PlatformSettings } from '../config/index.ts';

/** Whether a platform is called (it has a client): its Entitlement API's URL and secret are both there. */
export function hasEntitlementApi(
  p: PlatformSettings,
): p is PlatformSettings & { entitlementUrl: string; entitlementSecret: string } {
  return p.entitlementUrl !== undefined && p.entitlementSecret !== undefined;
}

/**
 * The platforms of the running config, as a mask over an index's platform numbers. Holdings of a platform no
 * longer configured (removed or renamed at a reload) stay in the store, but an entitlement request answers as if
 * they were not there: the operator has stopped taking that platform's deposits, so its removals can no longer
 * reach the store, and its old "open" would be answered for ever.
 */
export class ConfiguredPlatforms {
  private mask = new Uint8Array(0);
  private maskOf: readonly string[] | undefined;
  private maskLength = -1;

  constructor(private names: ReadonlySet<string>) {}

  /** A reload's platforms. */
  set(names: ReadonlySet<string>): void {
    this.names = names;
    this.maskOf = undefined;
  }

  /** mask[n] is 1 when platform number n of `numbering` is configured; made again when the numbering changes. */
  maskFor(numbering: readonly string[]): Uint8Array {
    if (numbering !== this.maskOf || numbering.length !== this.maskLength) {
      this.mask = Uint8Array.from(numbering, (name) => (this.names.has(name) ? 1 : 0));
      this.maskOf = numbering;
      this.maskLength = numbering.length;
    }
    return this.mask;
  }
}
