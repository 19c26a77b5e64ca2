/**
 * Looks up DOIs without sending them: the private lookup of doi-holdings (README, "Private lookup").
 *
 *   DOI_HOLDINGS_API_KEY=... bun examples/private-lookup.ts https://holdings.example.org [--cache FILE] DOI...
 *
 * 1. Fetch the prefix list (GET /v2.2/updates/prefixes), kept in the cache FILE (its folder made when missing;
 *    by default doi-holdings-examples/prefixes.json in the system's temporary folder, $TMPDIR else /tmp) and
 *    revalidated with If-None-Match the next time.
 * 2. For each DOI, hash its key (the DOI without doi: or https://doi.org/, ASCII letters lower-cased) with SHA-256.
 *    A DOI whose prefix is not listed has no updates: nothing is sent for it.
 * 3. POST the listed prefixes to /v2.2/updates/by-prefix and match the full hashes here.
 * Prints one JSON line per DOI: {"doi", "updates"}.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

interface PrefixList {
  etag?: string;
  prefixLength: number;
  prefixes: string[];
}

const args = process.argv.slice(2);
const cacheAt = args.indexOf('--cache');
const cacheOption =
  cacheAt >= 0 ? args.splice(cacheAt, 2)[1] : join(tmpdir(), 'doi-holdings-examples', 'prefixes.json');
const [base, ...dois] = args;
const key = process.env.DOI_HOLDINGS_API_KEY;
if (!base || dois.length === 0 || !key || !cacheOption) {
  console.error('usage: DOI_HOLDINGS_API_KEY=... bun examples/private-lookup.ts BASE_URL [--cache FILE] DOI...');
  process.exit(2);
}
const cacheFile: string = cacheOption;

/** The DOI key: what the service hashes. A doi.org link is a URL: the DOI in it is percent-decoded. */
function doiKey(doi: string): string {
  const s = doi.trim().replace(/^doi:\s*/i, '');
  const link = /^https?:\/\/(dx\.)?doi\.org\//i.exec(s);
  const bare = link ? decodeURIComponent(s.slice(link[0].length)) : s;
  return bare.replace(/[A-Z]+/g, (c) => c.toLowerCase());
}

async function prefixList(): Promise<PrefixList> {
  const cached: PrefixList | undefined = existsSync(cacheFile)
    ? JSON.parse(readFileSync(cacheFile, 'utf8'))
    : undefined;
  const headers: Record<string, string> = { 'x-api-key': key!, 'accept-encoding': 'gzip' };
  if (cached?.etag) headers['if-none-match'] = cached.etag;
  const r = await fetch(`${base}/v2.2/updates/prefixes`, { headers });
  if (r.status === 304 && cached) return cached;
  if (!r.ok) throw new Error(`prefix list: HTTP ${r.status} ${await r.text()}`);
  const list = { ...((await r.json()) as PrefixList), etag: r.headers.get('etag') ?? undefined };
  mkdirSync(dirname(cacheFile), { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(list));
  return list;
}

const list = await prefixList();
const listed = new Set(list.prefixes);
const hashes = new Map(dois.map((d) => [d, createHash('sha256').update(doiKey(d)).digest('hex')]));
const asked = [...new Set([...hashes.values()].map((h) => h.slice(0, list.prefixLength)).filter((p) => listed.has(p)))];
const found = new Map<string, unknown[]>();
for (let i = 0; i < asked.length; i += 100) {
  const r = await fetch(`${base}/v2.2/updates/by-prefix`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ prefixes: asked.slice(i, i + 100) }),
  });
  if (!r.ok) throw new Error(`by-prefix: HTTP ${r.status} ${await r.text()}`);
  for (const w of ((await r.json()) as { works: { hash: string; updates: unknown[] }[] }).works)
    found.set(w.hash, w.updates);
}
for (const [doi, hash] of hashes) console.log(JSON.stringify({ doi, updates: found.get(hash) ?? [] }));
console.error(`asked about ${asked.length} prefix(es) for ${dois.length} DOI(s)`);
