import { TokenBucket } from '../../base/index.ts';
import type { IntegratorSettings } from '../../config/index.ts';
import { errorResponse } from '../wire/index.ts';
import { limitItem, policyItem, retryAfterSeconds, tooManyRequests, withFields } from './rate-fields.ts';

/** Which limit refused a request, for /metrics: its requests, its DOIs, or a request more than the DOI burst. */
export type IntegratorLimitName = 'requests' | 'dois' | 'doi_burst';

/** An integrator's buckets, kept while its `rateLimit` stays the same. */
interface Buckets {
  /** the settings they were made from (a reload that leaves them the same keeps the buckets) */
  limit: NonNullable<IntegratorSettings['rateLimit']>;
  requests?: TokenBucket;
  dois?: TokenBucket;
  /** the `RateLimit-Policy` field, the same on every reply */
  policy: string;
}

/**
 * Every integrator's rate limit on the Entitlement API (docs/interface.md, "Rate limits"): a request costs one
 * request token and one DOI token per entry, taken from both buckets or from neither. One pair of buckets per
 * integrator, for both environments. An integrator without `rateLimit` costs one property read.
 */
export class IntegratorLimits {
  private readonly byName = new Map<string, Buckets>();
  /** requests refused, per integrator and limit (/metrics: doi_holdings_entitlement_rate_limited_total) */
  readonly refused = new Map<string, Record<IntegratorLimitName, number>>();

  /** `now`: milliseconds on a clock that is never set back */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Admits a request of `dois` entries, taking its tokens: undefined for an integrator without a limit, the reply's
   * headers (with the rate limit fields) for one within its limit, or the answer for one over it: 429 with
   * Retry-After, or 400 for a request with more DOIs than its DOI burst (no wait would let it pass).
   */
  admit(integrator: IntegratorSettings, dois: number): Headers | Response | undefined {
    if (integrator.rateLimit === undefined) return undefined;
    const b = this.bucketsOf(integrator.name, integrator.rateLimit);
    if (b.dois && dois > b.dois.burst) {
      this.count(integrator.name, 'doi_burst');
      return errorResponse(
        400,
        'BAD_REQUEST',
        `/dois: ${dois} DOIs given; your rate limit takes at most ${b.dois.burst} in one request ` +
          `(${perSecond(b.dois, 'DOIs')}): send at most ${b.dois.burst} per request`,
        { 'ratelimit-policy': b.policy },
      );
    }
    const requestWait = b.requests?.waitMs(1) ?? 0;
    const doiWait = b.dois?.waitMs(dois) ?? 0;
    if (requestWait > 0 || doiWait > 0) {
      const over = requestWait > 0 ? 'requests' : 'dois';
      this.count(integrator.name, over);
      const said =
        over === 'requests'
          ? `requests (${perSecond(b.requests!, 'requests')})`
          : `DOIs (this request has ${dois}; ${perSecond(b.dois!, 'DOIs')})`;
      const wait = Math.max(requestWait, doiWait);
      return tooManyRequests(`over the rate limit of ${said}; retry in ${retryAfterSeconds(wait)} s`, wait, fields(b));
    }
    b.requests?.take(1);
    b.dois?.take(dois);
    return withFields(fields(b));
  }

  private bucketsOf(name: string, limit: NonNullable<IntegratorSettings['rateLimit']>): Buckets {
    const kept = this.byName.get(name);
    // a reload makes new settings objects: buckets of the same limit carry on, a changed limit starts full
    if (kept && (kept.limit === limit || JSON.stringify(kept.limit) === JSON.stringify(limit))) {
      kept.limit = limit;
      return kept;
    }
    const requests = limit.requests && new TokenBucket(limit.requests.perSecond, limit.requests.burst, this.now);
    const dois = limit.dois && new TokenBucket(limit.dois.perSecond, limit.dois.burst, this.now);
    const policy = [
      ...(limit.requests ? [policyItem('requests', limit.requests)] : []),
      ...(limit.dois ? [policyItem('dois', limit.dois, 'dois')] : []),
    ].join(', ');
    const made: Buckets = { limit, policy, ...(requests && { requests }), ...(dois && { dois }) };
    this.byName.set(name, made);
    return made;
  }

  private count(name: string, limit: IntegratorLimitName): void {
    let counts = this.refused.get(name);
    if (!counts) this.refused.set(name, (counts = { requests: 0, dois: 0, doi_burst: 0 }));
    counts[limit]++;
  }
}

function fields(b: Buckets): Record<string, string> {
  const now = [
    ...(b.requests ? [limitItem('requests', b.requests)] : []),
    ...(b.dois ? [limitItem('dois', b.dois)] : []),
  ];
  return { 'ratelimit-policy': b.policy, ratelimit: now.join(', ') };
}

function perSecond(bucket: TokenBucket, what: string): string {
  return `${bucket.ratePerSecond} ${what} a second, ${bucket.burst} at once`;
}
