/**
 * What every call of ours to Crossref's REST API carries (its "etiquette"): a User-Agent naming the service and a
 * contact, the contact again as `mailto` in the query (the polite pool), and a Metadata Plus token when one is
 * configured. The harvest and the metadata lookup both call through these.
 */

/** The request headers of a call to Crossref. */
export function crossrefHeaders(userAgent: string, plusToken: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': userAgent, accept: 'application/json' };
  if (plusToken) headers['crossref-plus-api-token'] = `Bearer ${plusToken}`;
  return headers;
}

/** `<product> (mailto:<contact>)`: who is calling and how to reach them, as Crossref asks. */
export function crossrefUserAgent(product: string, mailto: string): string {
  return `${product} (mailto:${mailto})`;
}

/** `Retry-After` as seconds or an HTTP date, in ms. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
