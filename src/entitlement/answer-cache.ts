/**
 * Platforms' answers kept for a while (per platform `entitlementCacheSeconds`), keyed by (platform, DOI key, org
 * identity). Bounded: at most `maxEntries`, the least recently used go first. A new deposit for a DOI drops every
 * cached answer for it (dropDoi), whatever platform or org it was for.
 */
export class AnswerCache<V> {
  /** Map order is use order: a hit moves its entry to the end */
  private readonly entries = new Map<string, { value: V; expires: number; doiKey: string }>();
  /** DOI key -> the cache keys of its answers, so a deposit can drop them */
  private readonly byDoi = new Map<string, Set<string>>();
  hits = 0;
  misses = 0;
  /**
   * DOI keys a platform is being asked about (count of asks in flight), and how many drops each has seen since:
   * an answer asked for before a deposit (or a clear) must not be stored after it.
   */
  private readonly watched = new Map<string, { asks: number; drops: number }>();
  private clears = 0;

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether a deposit could matter: something is cached, or being asked for. */
  get busy(): boolean {
    return this.entries.size > 0 || this.watched.size > 0;
  }

  get(platform: string, doiKey: string, org: string): V | undefined {
    const key = cacheKey(platform, doiKey, org);
    const e = this.entries.get(key);
    if (!e || e.expires <= this.now()) {
      if (e) this.remove(key, e.doiKey);
      this.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    this.hits++;
    return e.value;
  }

  set(platform: string, doiKey: string, org: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const key = cacheKey(platform, doiKey, org);
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + ttlMs, doiKey });
    let keys = this.byDoi.get(doiKey);
    if (!keys) this.byDoi.set(doiKey, (keys = new Set()));
    keys.add(key);
    while (this.entries.size > this.maxEntries) {
      const [oldest, e] = this.entries.entries().next().value as [string, { doiKey: string }];
      this.remove(oldest, e.doiKey);
    }
  }

  clear(): void {
    this.entries.clear();
    this.byDoi.clear();
    this.clears++;
  }

  /** Marks an ask about `doiKey` as started; the stamp goes back with the answer to setIfCurrent. */
  watch(doiKey: string): AskStamp {
    let w = this.watched.get(doiKey);
    if (!w) this.watched.set(doiKey, (w = { asks: 0, drops: 0 }));
    w.asks++;
    return { doiKey, drops: w.drops, clears: this.clears };
  }

  /**
   * Ends an ask; stores its answer (when given) unless the DOI was dropped, or the cache cleared, since the ask
   * began: that answer may predate the deposit.
   */
  settle(stamp: AskStamp, answer?: { platform: string; org: string; value: V; ttlMs: number }): void {
    const w = this.watched.get(stamp.doiKey)!;
    if (answer && w.drops === stamp.drops && this.clears === stamp.clears) this.set(answer.platform, stamp.doiKey, answer.org, answer.value, answer.ttlMs);
    if (--w.asks === 0) this.watched.delete(stamp.doiKey);
  }

  dropDoi(doiKey: string): void {
    const w = this.watched.get(doiKey);
    if (w) w.drops++;
    const keys = this.byDoi.get(doiKey);
    if (!keys) return;
    for (const k of keys) this.entries.delete(k);
    this.byDoi.delete(doiKey);
  }

  private remove(key: string, doiKey: string): void {
    this.entries.delete(key);
    const keys = this.byDoi.get(doiKey);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.byDoi.delete(doiKey);
  }
}

/** What watch() hands an ask, for settle(). */
export interface AskStamp {
  doiKey: string;
  drops: number;
  clears: number;
}

function cacheKey(platform: string, doiKey: string, org: string): string {
  return `${platform}\u0000${doiKey}\u0000${org}`;
}
