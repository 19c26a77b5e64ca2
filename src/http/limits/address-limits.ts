import { LruMap, TokenBucket } from '../../base/index.ts';
import type { RateSettings } from '../../config/index.ts';
import { type ClientAddresses, readerKey } from './client-address.ts';

/**
 * Readers remembered at most: about 200 bytes each, so some 13 MiB at the bound. Past it the reader seen least
 * recently is forgotten; it most likely has a full bucket by then, and otherwise gains at most one burst.
 */
export const MAX_READERS = 65_536;

/**
 * A limit per client address (the status page's, `[statusPage] rateLimit`): a token bucket per reader (readerKey),
 * kept in the order last seen, bounded by `maxReaders`.
 */
export class AddressLimits {
  private readonly buckets = new LruMap<string, TokenBucket>();
  /** requests refused (/metrics: doi_holdings_status_page_rate_limited_total) */
  refused = 0;

  constructor(
    readonly rate: RateSettings,
    private readonly addresses: ClientAddresses,
    private readonly now: () => number = () => performance.now(),
    private readonly maxReaders = MAX_READERS,
  ) {}

  /** Milliseconds until this request's reader may have another page: 0 when it may now (its token is taken). */
  admit(request: Request): number {
    const address = this.addresses.of(request);
    const key = address === undefined ? '' : readerKey(address);
    let bucket = this.buckets.get(key); // now the last seen
    if (!bucket) {
      if (this.buckets.size >= this.maxReaders) this.buckets.delete(this.buckets.oldest()!);
      bucket = new TokenBucket(this.rate.perSecond, this.rate.burst, this.now);
      this.buckets.set(key, bucket);
    }
    const wait = bucket.waitMs(1);
    if (wait > 0) {
      this.refused++;
      return wait;
    }
    bucket.take(1);
    return 0;
  }

  /** readers remembered now */
  get size(): number {
    return this.buckets.size;
  }
}
