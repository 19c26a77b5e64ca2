import type { TokenBucket } from '../../base/index.ts';
import type { RateSettings } from '../../config/index.ts';
import { errorResponse, JSON_HEADERS } from '../wire/index.ts';

/**
 * The rate limit fields of a reply (docs/interface.md, "Rate limits"): `RateLimit-Policy` and `RateLimit` as
 * draft-ietf-httpapi-ratelimit-headers-11 writes them (lists of Structured Field items), and the 429 every limit
 * answers with. A token bucket is told as a quota `q` (its burst) over a window `w` (the whole seconds an empty
 * bucket takes to fill again), and `r` the whole tokens it holds now; no `t` is sent, as a bucket refills token by
 * token rather than all at once at a window's end.
 */

/** One policy's item of `RateLimit-Policy`: `"requests";q=2;w=2000`, with the unit's parameter when not requests. */
export function policyItem(name: string, rate: RateSettings, unit?: string): string {
  const window = Math.max(1, Math.ceil(rate.burst / rate.perSecond));
  // the draft's `qu` takes only the units of its registry; another is said in a parameter of ours, as it asks
  return `"${name}";q=${rate.burst};w=${window}${unit === undefined ? '' : `;doi-holdings-unit="${unit}"`}`;
}

/** One policy's item of `RateLimit`: what its bucket holds now. */
export function limitItem(name: string, bucket: TokenBucket): string {
  return `"${name}";r=${bucket.available()}`;
}

/** Whole seconds, rounded up, at least 1: Retry-After takes no fraction, and 0 would invite a retry at once. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

/** The 429 of every limit: the API's error body, Retry-After, and the rate limit fields when there are some. */
export function tooManyRequests(message: string, waitMs: number, fields: Record<string, string> = {}): Response {
  return errorResponse(429, 'RATE_LIMITED', message, {
    'retry-after': String(retryAfterSeconds(waitMs)),
    ...fields,
  });
}

/** A 200's headers with the rate limit fields. */
export function withFields(fields: Record<string, string>): Headers {
  return new Headers({ ...JSON_HEADERS, ...fields });
}
