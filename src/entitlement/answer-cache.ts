import { LruMap } from '../base/index.ts';

/** A cached answer and what the cache keeps beside it. */
interface Entry<V> {
  key: string;
  value: V;
  expires: number;
  doiKey: string;
  bytes: number;
}

/** What an entry costs beyond its strings: the map slot, the entry, the value's objects (measured order of size). */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Platforms' answers kept for a while (per platform `entitlementCacheSeconds`), keyed by (platform, DOI key, org
 * identity). Bounded by entries and by bytes (a platform's answer may carry 32 links of 4 KB each): past either,
 * the least recently used go first. A new deposit for a DOI drops every cached answer for it (dropDoi), whatever
 * platform or org it was for.
 */
export class AnswerCache<V> {
  /** in use order; the bytes are counted here, beside it, as only this cache bounds by them */
  private readonly entries = new LruMap<string, Entry<V>>();
  private usedBytes = 0;
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

  /** `sizeOf`: the bytes of a value's strings (two a character: the most a JS string takes) */
  constructor(
    readonly maxEntries: number,
    private readonly now: () => number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
    private readonly sizeOf: (value: V) => number = () => 0,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** What the cached answers take, as counted against maxBytes. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** Whether a deposit could matter: something is cached, or being asked for. */
  get busy(): boolean {
    return this.entries.size > 0 || this.watched.size > 0;
  }

  get(platform: string, doiKey: string, org: string): V | undefined {
    const e = this.entries.get(cacheKey(platform, doiKey, org));
    if (!e || e.expires <= this.now()) {
      if (e) this.remove(e);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.value;
  }

  set(platform: string, doiKey: string, org: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const key = cacheKey(platform, doiKey, org);
    const bytes = ENTRY_OVERHEAD_BYTES + 2 * (key.length + doiKey.length) + this.sizeOf(value);
    const old = this.entries.peek(key);
    if (old) this.remove(old);
    if (bytes > this.maxBytes) return; // an answer larger than the whole cache is not kept
    this.entries.set(key, { key, value, expires: this.now() + ttlMs, doiKey, bytes });
    this.usedBytes += bytes;
    let keys = this.byDoi.get(doiKey);
    if (!keys) this.byDoi.set(doiKey, (keys = new Set()));
    keys.add(key);
    while (this.entries.size > 0 && (this.entries.size > this.maxEntries || this.usedBytes > this.maxBytes))
      this.remove(this.entries.peek(this.entries.oldest()!)!);
  }

  clear(): void {
    this.entries.clear();
    this.byDoi.clear();
    this.usedBytes = 0;
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
    if (answer && w.drops === stamp.drops && this.clears === stamp.clears)
      this.set(answer.platform, stamp.doiKey, answer.org, answer.value, answer.ttlMs);
    if (--w.asks === 0) this.watched.delete(stamp.doiKey);
  }

  dropDoi(doiKey: string): void {
    const w = this.watched.get(doiKey);
    if (w) w.drops++;
    const keys = this.byDoi.get(doiKey);
    if (!keys) return;
    for (const k of keys) this.forget(this.entries.peek(k)!);
    this.byDoi.delete(doiKey);
  }

  /** Out of the use-ordered map and the byte count (not the DOI's key set). */
  private forget(e: Entry<V>): void {
    this.entries.delete(e.key);
    this.usedBytes -= e.bytes;
  }

  private remove(e: Entry<V>): void {
    this.forget(e);
    const keys = this.byDoi.get(e.doiKey);
    if (!keys) return;
    keys.delete(e.key);
    if (keys.size === 0) this.byDoi.delete(e.doiKey);
  }
}

/** What watch() hands an ask, for settle(). */
interface AskStamp {
  doiKey: string;
  drops: number;
  clears: number;
}

function cacheKey(platform: string, doiKey: string, org: string): string {
  return `${platform}\u0000${doiKey}\u0000${org}`;
}
