/**
 * The Entitlement benchmark's loopback platform: a bare Bun server standing in for a paid platform's own
 * Entitlement API (docs/interface.md). `POST /entitlements` with `{"org": {...}, "dois": [...]}` answers
 * `{"entitlements": [...]}`, every DOI `entitled: "yes"` with a document URL and a PDF vor, after a delay; or,
 * in hang mode, never answers: the request is held until the caller goes away (its time-out).
 *
 * Run as its own process: `bun bench/lib/platform-server.ts [delayMs]` prints its URL on stdout. The benchmark
 * switches the mode between runs with `PUT /mode` `{"delayMs": 5}` or `{"hang": true}`, and reads counters from
 * `GET /stats`. It checks that an `authorization: Bearer` header is present (401 otherwise), not the JWT itself.
 */

interface Mode {
  hang: boolean;
  delayMs: number;
}

const mode: Mode = { hang: false, delayMs: Number(process.argv[2] ?? 5) };
const stats = { calls: 0, dois: 0, unauthorized: 0, hanging: 0, abandoned: 0 };
const headers = { 'content-type': 'application/json' };

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  // a hanging call is held until the caller gives up: never close it from this side
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (req.method === 'GET' && path === '/stats') return Response.json({ ...stats, mode });
    if (req.method === 'PUT' && path === '/mode') {
      const m = (await req.json()) as Partial<Mode>;
      mode.hang = m.hang === true;
      if (typeof m.delayMs === 'number') mode.delayMs = m.delayMs;
      return new Response(null, { status: 204 });
    }
    if (req.method !== 'POST' || path !== '/entitlements') return new Response('not found', { status: 404 });
    stats.calls++;
    if (!/^Bearer \S+$/.test(req.headers.get('authorization') ?? '')) {
      stats.unauthorized++;
      return new Response('{"message":"a Bearer token is required"}', { status: 401, headers });
    }
    const body = (await req.json()) as { dois: string[] };
    stats.dois += body.dois.length;
    if (mode.hang) {
      stats.hanging++;
      await new Promise<void>((resolve) => {
        if (req.signal.aborted) resolve();
        else req.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      stats.hanging--;
      stats.abandoned++;
      return new Response(null, { status: 499 });
    }
    if (mode.delayMs > 0) await Bun.sleep(mode.delayMs);
    const entitlements = body.dois.map((doi) => ({
      doi,
      entitled: 'yes',
      document: `https://platform.example/doi/${doi}`,
      vor: [{ url: `https://platform.example/doi/pdf/${doi}`, contentType: 'application/pdf' }],
    }));
    return new Response(JSON.stringify({ entitlements }), { headers });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
