import { realpathSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import type { ConfigFile } from './schema.ts';

/**
 * Staging deposits never reach production (docs/interface.md, decision 13): the two environments' buckets must
 * not share files. Two folders are one when they are the same or one holds the other (the outer watch would see
 * the inner bucket's platform folders as its own), after `..`, trailing slashes and symbolic links; two S3
 * buckets are one when they name the same bucket of the same service (sameS3Service) with prefixes that overlap.
 */
export function bucketsApartProblems(buckets: ConfigFile['buckets'], base: string): string[] {
  const [p, s] = [buckets.production, buckets.staging];
  if (!s) return [];
  const out: string[] = [];
  const [pp, sp] = [real(resolve(base, p.path)), real(resolve(base, s.path))];
  if (inside(sp, pp) || inside(pp, sp))
    out.push(
      `  /buckets/staging/path: staging's folder ${sp} and production's ${pp} ${pp === sp ? 'are the same folder' : 'are one inside the other'}: each environment needs a folder of its own`,
    );
  if (p.kind === 's3' && s.kind === 's3' && p.bucket === s.bucket && sameS3Service(p.endpoint, s.endpoint)) {
    const [a, b] = [normalisePrefix(p.prefix), normalisePrefix(s.prefix)];
    if (a.startsWith(b) || b.startsWith(a))
      out.push(
        `  /buckets/staging/prefix: staging and production read the same objects of S3 bucket ${p.bucket} (prefixes "${a}" and "${b}" overlap): give each its own bucket or prefixes apart`,
      );
  }
  return out;
}

/**
 * Whether two endpoints reach the same S3 service: AWS (no endpoint, or a host under amazonaws.com, whose bucket
 * names are global, whatever the region), or one host and path once letter case, scheme, default port and a
 * trailing slash are set aside.
 */
function sameS3Service(a: string | undefined, b: string | undefined): boolean {
  return serviceOf(a) === serviceOf(b);
}

function serviceOf(endpoint: string | undefined): string {
  if (endpoint === undefined || endpoint === '') return 'aws';
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return endpoint; // the schema has refused it already
  }
  if (url.hostname === 'amazonaws.com' || url.hostname.endsWith('.amazonaws.com')) return 'aws';
  return `${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** `inner` is `outer` or lies under it. */
function inside(inner: string, outer: string): boolean {
  const r = relative(outer, inner);
  return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !r.startsWith(sep));
}

/** The folder with its links resolved, as far as it exists (a bucket folder may not exist yet). */
function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** An S3 prefix as the mirror lists under it: no leading slash, one trailing slash unless empty. */
export function normalisePrefix(p: string | undefined): string {
  const trimmed = (p ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}
