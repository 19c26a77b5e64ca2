/**
 * The Entitlement benchmark's loopback platform: a bare Bun server standing in for a paid platform's own
 * Entitlement API (docs/interface.md). `POST /entitlements` with `{"org": {...}, "dois": [...]}` answers
 * `{"entitlements": [...]}`, every DOI `entitled: "yes"` with a document URL and a PDF vor, after a delay; or,
 * in hang mode, never answers: the request is held until the caller goes away (its time-out).
 *
 * Run as its own process: `bun bench/lib/platform-server.ts [delayMs]` prints its URL on stdout. The benchmark
 * switches the mode between runs with `PUT /mode` `{"delayMs": 5}`, `{"hang": true}` or `{"meanMs": 300,
 * "p95Ms": 500}` (each call's delay drawn from a log-normal distribution of that mean and 95th percentile, as
 * GetFTR's guideline for publishers puts it), and reads counters from `GET /stats`, with the p50 and p99 of the
 * calls answered since the last `PUT /mode` (from the request's arrival to its answer ready: the platform's own
 * time, to hold the caller's against). It checks that an `authorization: Bearer` header is present (401
 * otherwise), not the JWT itself.
 */

interface Mode {
  hang: boolean;
  delayMs: number;
  /** a log-normal delay of this mean and 95th percentile, instead of delayMs */
  meanMs?: number;
  p95Ms?: number;
}

const mode: Mode = { hang: false, delayMs: Number(process.argv[2] ?? 5) };
const stats = { calls: 0, dois: 0, unauthorized: 0, hanging: 0, abandoned: 0 };
/** each answered call's own time (ms) since the mode was last set */
let served: number[] = [];

/** A delay drawn from the log-normal distribution with this mean and 95th percentile (ms). */
function logNormalDelay(meanMs: number, p95Ms: number): number {
  // mean = exp(mu + s^2/2), p95 = exp(mu + 1.645 s): s is the smaller root of s^2/2 - 1.645 s + ln(p95/mean) = 0
  const z95 = 1.6449;
  const s = z95 - Math.sqrt(z95 * z95 - 2 * Math.log(p95Ms / meanMs));
  const mu = Math.log(meanMs) - (s * s) / 2;
  // Box-Muller: a standard normal draw
  const normal = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return Math.exp(mu + s * normal);
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
const headers = { 'content-type': 'application/json' };

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  // a hanging call is held until the caller gives up: never close it from this side
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (req.method === 'GET' && path === '/stats') {
      const sorted = [...served].sort((a, b) => a - b);
      return Response.json({
        ...stats,
        mode,
        served: { calls: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) },
      });
    }
    if (req.method === 'PUT' && path === '/mode') {
      const m = (await req.json()) as Partial<Mode>;
      mode.hang = m.hang === true;
      if (typeof m.delayMs === 'number') mode.delayMs = m.delayMs;
      mode.meanMs = m.meanMs;
      mode.p95Ms = m.p95Ms;
      served = [];
      return new Response(null, { status: 204 });
    }
    const arrived = performance.now();
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
    const delayMs =
      mode.meanMs !== undefined ? logNormalDelay(mode.meanMs, mode.p95Ms ?? 2 * mode.meanMs) : mode.delayMs;
    if (delayMs > 0) await Bun.sleep(delayMs);
    const entitlements = body.dois.map((doi) => ({
      doi,
      entitled: 'yes',
      document: `https://platform.example/doi/${doi}`,
      vor: [{ url: `https://platform.example/doi/pdf/${doi}`, contentType: 'application/pdf' }],
    }));
    const answer = JSON.stringify({ entitlements });
    served.push(performance.now() - arrived);
    return new Response(answer, { headers });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
