/**
 * Whether an Accept-Encoding header lets an answer be gzip-coded (RFC 9110, 12.5.3): `gzip` (or its alias
 * `x-gzip`) with a q-value above 0, or, when gzip is not named, `*` with one. `gzip;q=0` refuses it; no header
 * asks for nothing, so the answer stays identity.
 */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let gzip = -1;
  let any = -1;
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = qValue(params);
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip, q);
    else if (coding === '*') any = Math.max(any, q);
  }
  return (gzip >= 0 ? gzip : any) > 0;
}

/** The `q` parameter's weight, 1 when absent; a malformed one weighs 0 (not acceptable), as a client cannot mean it. */
function qValue(params: string[]): number {
  const q = params.find((p) => p.startsWith('q='));
  if (q === undefined) return 1;
  const value = q.slice(2).trim();
  return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
}

/**
 * The ETag of one content coding of a representation whose identity ETag is `etag`: a strong validator must
 * differ between codings (RFC 9110, 8.8.3), or a cache could serve gzip bytes to a client that refused them.
 */
export function codedEtag(etag: string, coding: 'gzip'): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}
