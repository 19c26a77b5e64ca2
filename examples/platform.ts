/**
 * A publisher platform's own Entitlement API, as doi-holdings calls it for the paid DOIs the platform holds
 * (GetFTR's publisher integration: README, "Trying it with a platform of your own"; docs/interface.md, "For
 * platforms: how we call your Entitlement API").
 *
 *   DOI_HOLDINGS_EXAMPLE_SECRET=... bun examples/platform.ts [HOST:PORT]      (default 127.0.0.1:8081)
 *
 * Every call must carry a JWT signed HS256 with the secret shared with doi-holdings, for this platform (`aud`),
 * issued in the last five minutes (`iat`); other calls get a 401. Each DOI is answered from TABLE: `yes` when the
 * reader's org has an IPv4 address of a subscribing network, `no` otherwise, and `no` for a DOI not in it. One
 * line per call on stdout says who asked about what, and what was answered.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** This platform's name in doi-holdings' config: the `aud` its calls carry. */
const PLATFORM = 'example';

/** The platform's paid articles, by DOI in lower case: the networks that subscribe, the landing page, the PDF. */
const TABLE: Record<string, { subscribers: string[]; document: string; pdf: string }> = {
  '10.5555/abc.124': {
    subscribers: ['192.0.2.'],
    document: 'https://example.org/article/10.5555/abc.124',
    pdf: 'https://example.org/pdf/10.5555/abc.124',
  },
};

const [host = '127.0.0.1', port = '8081'] = (process.argv[2] ?? '').split(':').filter(Boolean);
const secret = process.env.DOI_HOLDINGS_EXAMPLE_SECRET;
if (!secret) {
  console.error('usage: DOI_HOLDINGS_EXAMPLE_SECRET=... bun examples/platform.ts [HOST:PORT]');
  process.exit(2);
}

/** The claims when `authorization` is `Bearer <JWT>` signed HS256 with `secret`; undefined otherwise. */
function verifyJwt(authorization: string | null, secret: string): Record<string, unknown> | undefined {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(authorization ?? '');
  if (!m) return undefined;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${m[2]}`).digest();
  const given = Buffer.from(m[3]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return decode(m[1]!).alg === 'HS256' ? decode(m[2]!) : undefined;
}

function refuse(why: string): Response {
  console.log(`refused a call: ${why}`);
  return Response.json({ error: why }, { status: 401 });
}

const server = Bun.serve({
  hostname: host,
  port: Number(port),
  async fetch(request) {
    if (request.method !== 'POST') return new Response('POST {"org", "dois"} here\n', { status: 405 });
    const claims = verifyJwt(request.headers.get('authorization'), secret);
    if (!claims) return refuse('no JWT, or not signed HS256 with our secret');
    if (claims.aud !== PLATFORM) return refuse(`the JWT is for ${JSON.stringify(claims.aud)}, not ${PLATFORM}`);
    const age = Date.now() / 1000 - Number(claims.iat);
    if (!(age > -60 && age < 300)) return refuse(`the JWT was issued ${Math.round(age)} s ago`);
    const { org, dois } = (await request.json()) as { org: { ipv4?: string }; dois: string[] };
    const entitlements = dois.map((doi) => {
      const article = TABLE[doi.toLowerCase()];
      const subscribes = article?.subscribers.some((net) => org.ipv4?.startsWith(net));
      if (!article || !subscribes) return { doi, entitled: 'no' };
      const vor = [{ url: article.pdf, contentType: 'application/pdf' }];
      return { doi, entitled: 'yes', document: article.document, vor };
    });
    const said = entitlements.map((e) => `${e.doi} ${e.entitled}`).join(', ');
    console.log(`${claims.sub} asked for ${JSON.stringify(org)}: ${said}`);
    return Response.json({ entitlements });
  },
});
console.log(`the example platform's Entitlement API is listening on http://${host}:${server.port}/entitlements`);
