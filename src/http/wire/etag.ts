/**
 * If-None-Match against a response's ETag (RFC 9110 13.1.2): `*`, or a list of entity tags compared weakly (a
 * `W/` on either side aside). One rule for every route that answers 304.
 */
export function noneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}
