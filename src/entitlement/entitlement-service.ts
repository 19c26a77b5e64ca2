import type { EntitlementSettings, IntegratorSettings, PlatformSettings } from '../config/index.ts';
import { doiKeysOf, type Store } from '../store/index.ts';
import { AnswerCache } from './answer-cache.ts';
import type { EntitlementSource, Org } from './api/index.ts';
import { Decision, orgIdentity, type PlatformVerdict } from './api/index.ts';
import { ConfiguredPlatforms, hasEntitlementApi } from './configured-platforms.ts';
import {
  HoldingsIndex,
  type IndexedHolding,
  type OpenPart,
  openPartOf,
  type RecordView,
} from './holdings-index/index.ts';
import type { MetadataLookup } from './lookup/index.ts';
import { type PlatformClient, TIMED_OUT, verdictOf } from './platforms/index.ts';

/** A DOI that platforms must decide: its key, the bare DOI sent to them, its (paid or untyped) holdings. */
export interface AskedDoi {
  doiKey: string;
  bare: string;
  holdings: readonly IndexedHolding[];
}

/** The bounds of an environment's answer cache ([entitlements] in the config). */
type CacheBounds = Pick<EntitlementSettings, 'cacheMaxEntries' | 'cacheMaxBytes'>;

/** A platform's cached decision (not the org: the cache key holds it; nor a customerID, shown to counter integrators only). */
type CachedVerdict = Omit<PlatformVerdict, 'source' | 'statusCode' | 'customerID'>;

/**
 * Entitlement decisions for one environment (docs/interface.md, "Entitlement API"): from its holdings index, and
 * for paid DOIs from the platforms (clients shared by every environment: one breaker and one cap per platform),
 * with this environment's answer cache.
 */
export class EntitlementService {
  readonly index: HoldingsIndex;
  /** replaced when a reload changes its size (answers asked for before then settle into the one they were asked through) */
  cache: AnswerCache<CachedVerdict>;
  /** answers given, by source ('none': no platform holds the DOI; 'invalid': not a DOI) */
  readonly answers = new Map<EntitlementSource | 'none' | 'invalid', number>();
  /** entries by metadata are looked up through this (shared by every environment: one Crossref); none: they are 400s */
  lookup: MetadataLookup | undefined;
  private settings: ReadonlyMap<string, PlatformSettings>;
  /** the config's platforms: holdings of others answer nothing (a removed platform's "open" must not stand for ever) */
  private readonly configured: ConfiguredPlatforms;
  /** those without an Entitlement API: for a counter integrator only their deposits answer (the others are asked) */
  private readonly uncalled: ConfiguredPlatforms;
  private readonly unsubscribe: () => void;

  constructor(
    store: Store,
    platforms: readonly PlatformSettings[],
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    opts: CacheBounds & { now: () => number },
  ) {
    this.index = new HoldingsIndex(store);
    this.settings = new Map(platforms.map((p) => [p.name, p]));
    this.configured = new ConfiguredPlatforms(new Set(this.settings.keys()));
    this.uncalled = new ConfiguredPlatforms(uncalledNames(platforms));
    this.now = opts.now;
    this.cache = this.newCache(opts);
    // a new deposit for a DOI drops its cached answers, and those on their way (only worth the walk when there are any)
    this.unsubscribe = store.onApplied((files) => {
      if (!this.cache.busy) return;
      for (const f of files) for (const key of doiKeysOf(f)) this.cache.dropDoi(key);
    });
  }

  private readonly now: () => number;

  /**
   * Brings the index up to date (once per request, before its lookups). A new generation means another process
   * applied files this one was not told of: which DOIs they touched is unknown, so every cached answer goes.
   */
  refresh(): void {
    this.index.refresh();
    if (this.index.generation !== this.generationSeen) {
      this.generationSeen = this.index.generation;
      this.cache.clear();
    }
  }
  private generationSeen = 0;

  /**
   * A reloaded config's platforms: from the next request on they decide with these settings (and the clients map
   * the Entitlements owner updated). Cached answers go, since a platform's endpoint or cache time may have changed.
   */
  reconfigure(platforms: readonly PlatformSettings[], bounds: CacheBounds): void {
    this.settings = new Map(platforms.map((p) => [p.name, p]));
    this.configured.set(new Set(this.settings.keys()));
    this.uncalled.set(uncalledNames(platforms));
    if (bounds.cacheMaxEntries !== this.cache.maxEntries || bounds.cacheMaxBytes !== this.cache.maxBytes)
      this.cache = this.newCache(bounds);
    else this.cache.clear();
  }

  private newCache(bounds: CacheBounds): AnswerCache<CachedVerdict> {
    return new AnswerCache(bounds.cacheMaxEntries, this.now, bounds.cacheMaxBytes, cachedBytes);
  }

  /**
   * The first holding a configured platform answers from the deposit, in an index record (no allocation). For a
   * counter integrator, only of a platform without an Entitlement API: one with it is asked, so it can count the use.
   */
  openPart(record: RecordView, out: OpenPart, counter = false): OpenPart | undefined {
    return openPartOf(
      record.bytes,
      out,
      record.valueStart,
      record.valueEnd,
      (counter ? this.uncalled : this.configured).maskFor(this.index.platformNames),
    );
  }

  /** The holdings of configured platforms in an index record. */
  holdings(record: RecordView): IndexedHolding[] {
    return this.index.holdings(record, this.configured.maskFor(this.index.platformNames));
  }

  count(source: EntitlementSource | 'none' | 'invalid', n = 1): void {
    if (n > 0) this.answers.set(source, (this.answers.get(source) ?? 0) + n);
  }

  /**
   * Asks the platforms about DOIs no deposit answers. `verdicts` (one per DOI, in order) fills in as each DOI is
   * decided (combine: the first `yes`, else once all its platforms answered); `done` resolves once all are;
   * `waitMs` is how long until every call has ended (the longest time-out of the platforms asked). A platform gets
   * each DOI key once per request, in batches.
   */
  ask(
    dois: readonly AskedDoi[],
    org: Org,
    integrator: IntegratorSettings,
  ): { verdicts: (PlatformVerdict | undefined)[]; done: Promise<void>; waitMs: number } {
    const start = this.now();
    let deadline = start;
    const identity = orgIdentity(org);
    // a counter integrator's asks neither read the cache nor fill it: its answers of open holdings would be read by no one
    const cache = integrator.counter ? undefined : this.cache;
    const decision = new Decision(dois);
    /** per platform: DOI key -> the bare DOI to send and the entries (doi number, holding) waiting for it */
    const toAsk = new Map<
      string,
      Map<string, { bare: string; waiting: { at: number; slot: number; held: IndexedHolding }[] }>
    >();
    for (let at = 0; at < dois.length; at++) {
      const d = dois[at]!;
      for (let slot = 0; slot < d.holdings.length; slot++) {
        const h = d.holdings[slot]!;
        const settings = this.settings.get(h.platform);
        const client = this.clients.get(h.platform);
        if (!settings || !client) {
          decision.put(at, slot, notSupported(h));
          continue;
        }
        const cached =
          cache && integrator.cache && settings.entitlementCacheSeconds > 0
            ? cache.get(h.platform, d.doiKey, identity)
            : undefined;
        if (cached) {
          client.figures.cacheHits++;
          decision.put(at, slot, withDepositedAccess({ ...cached, statusCode: 200, source: 'service_cache', org }, h));
          continue;
        }
        let byKey = toAsk.get(h.platform);
        if (!byKey) toAsk.set(h.platform, (byKey = new Map()));
        let one = byKey.get(d.doiKey);
        if (!one) byKey.set(d.doiKey, (one = { bare: d.bare, waiting: [] }));
        one.waiting.push({ at, slot, held: h });
      }
    }
    for (const [platform, byKey] of toAsk) {
      const client = this.clients.get(platform)!;
      const ttl = this.settings.get(platform)!.entitlementCacheSeconds * 1000;
      const until = start + client.settings.entitlementTimeoutMs;
      deadline = Math.max(deadline, until);
      const asked = [...byKey];
      const batches = client.ask(
        asked.map(([key, one]) => ({ bare: one.bare, key })),
        org,
        integrator.name,
        until,
      );
      const stamps = cache && ttl > 0 ? asked.map(([key]) => cache.watch(key)) : undefined;
      for (const { from, to, result } of batches)
        void result.then((r) => {
          for (let i = from; i < to; i++) {
            const [key, one] = asked[i]!;
            const v = verdictOf(r, key);
            if (cache && stamps) {
              const keep = v.source === 'service_request' && v.entitled !== 'maybe';
              cache.settle(stamps[i]!, keep ? { platform, org: identity, value: cacheable(v), ttlMs: ttl } : undefined);
            }
            for (const w of one.waiting) decision.put(w.at, w.slot, withDepositedAccess(v, w.held));
          }
        });
    }
    return { verdicts: decision.verdicts, done: decision.done, waitMs: deadline - start };
  }

  /** What a DOI whose platforms did not answer by the request's deadline is answered (a 504, as for a time-out). */
  timedOut(d: AskedDoi): PlatformVerdict {
    return withDepositedAccess(TIMED_OUT, d.holdings.find((h) => h.accessType) ?? d.holdings[0]!);
  }

  close(): void {
    this.unsubscribe();
    this.index.close();
  }
}

/** A paid holding on a platform without an Entitlement API. */
function notSupported(h: IndexedHolding): PlatformVerdict {
  const v: PlatformVerdict = { statusCode: 200, entitled: 'maybe', source: 'publisher_not_supported' };
  if (h.accessType) v.accessType = h.accessType;
  return v;
}

/** The platform's accessType when it gives one, else the deposited one. */
function withDepositedAccess(v: PlatformVerdict, h: IndexedHolding): PlatformVerdict {
  return v.accessType || !h.accessType ? v : { ...v, accessType: h.accessType };
}

/** The bytes of a cached answer's strings, two a character (the most a JS string takes), and 64 a link or licence object. */
function cachedBytes(v: CachedVerdict): number {
  let n = 2 * (v.entitled.length + (v.accessType?.length ?? 0) + (v.document?.length ?? 0));
  for (const l of v.vor ?? []) n += 64 + 2 * (l.url.length + (l.contentType?.length ?? 0));
  for (const l of v.av ?? []) n += 64 + 2 * (l.url.length + (l.contentType?.length ?? 0));
  for (const l of v.licenses ?? []) n += 64 + 2 * (l.type.length + l.url.length + l.startDate.length);
  return n;
}

/** A live answer as kept: the customerID is for counter integrators, who are never served from the cache. */
function cacheable(v: PlatformVerdict): CachedVerdict {
  const { source: _s, statusCode: _c, org: _o, customerID: _i, ...rest } = v;
  return rest;
}

/** The configured platforms without an Entitlement API. */
function uncalledNames(platforms: readonly PlatformSettings[]): Set<string> {
  return new Set(platforms.filter((p) => !hasEntitlementApi(p)).map((p) => p.name));
}
