/**
 * The rate limits in /openapi.json (docs/interface.md, "Rate limits"): the Entitlement API's 429 and the fields of
 * draft-ietf-httpapi-ratelimit-headers-11 on its answers, and the status page's 429.
 */

const RETRY_AFTER = {
  description: 'Whole seconds until the request may pass',
  schema: { type: 'integer', minimum: 1 },
};
const POLICY = {
  description:
    'The integrator\'s limits, e.g. `"requests";q=2;w=4, "dois";q=100;w=10;doi-holdings-unit="dois"`: each a burst `q` over the seconds `w` an empty bucket takes to fill; only for an integrator with a rate limit',
  schema: { type: 'string' },
};
const LIMIT = {
  description:
    'What each limit holds now, e.g. `"requests";r=1, "dois";r=60`; only for an integrator with a rate limit',
  schema: { type: 'string' },
};
const ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** An Entitlement API operation with its rate limit: the fields on its 200, the 429, and the 400 of a request over the DOI burst. */
export function withIntegratorRateLimit<T extends { responses: Record<string, object> }>(op: T): T {
  const ok = op.responses['200'] as { headers?: object };
  const bad = op.responses['400'] as { description: string };
  return {
    ...op,
    responses: {
      ...op.responses,
      '200': { ...ok, headers: { RateLimit: LIMIT, 'RateLimit-Policy': POLICY } },
      '400': { ...bad, description: `${bad.description}; or more DOIs than the integrator's DOI burst` },
      '429': {
        description: "RATE_LIMITED: over the integrator's rate limit (requests or DOIs a second)",
        headers: { 'Retry-After': RETRY_AFTER, RateLimit: LIMIT, 'RateLimit-Policy': POLICY },
        content: ERROR,
      },
    },
  };
}

/** The status page's 429: too many pages from one client address. */
export const STATUS_PAGE_RATE_LIMITED = {
  '429': {
    description: 'RATE_LIMITED: too many pages asked from this client address (when the operator set a limit)',
    headers: { 'Retry-After': RETRY_AFTER },
    content: { 'text/html': { schema: { type: 'string' } }, ...ERROR },
  },
};
