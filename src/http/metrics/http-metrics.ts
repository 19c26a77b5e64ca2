import type { Registry } from 'prom-client';
import type { Logger } from '../../base/index.ts';
import { LatencyHistogram } from '../../entitlement/index.ts';
import { counter, histogram } from './registry.ts';

/** Request latency buckets (seconds): the APIs answer in ms; a platform call may take up to its time-out. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DURATION = 'doi_holdings_http_request_duration_seconds';
const REQUESTS = 'doi_holdings_http_requests_total';

/** One (route, status) series. */
interface Series {
  labels: { route: string; status: number };
  latency: LatencyHistogram;
}

/**
 * The HTTP figures of /metrics: a latency histogram and a request counter by route and status, counted here and
 * read by the registry at each scrape (registry.ts says why not prom-client's own observe). A 5xx also gets a log
 * line, so an operator alerted by the 5xx rate finds the requests in the journal.
 */
export class HttpMetrics {
  /** route -> status -> its series (no key string made per request: building and hashing one cost ~0.1 µs) */
  private readonly series = new Map<string, Map<number, Series>>();

  constructor(private readonly log: Logger) {}

  /** One answered request; `startedAt` is performance.now() when its handler began. */
  note(request: Request, route: string, status: number, startedAt: number, detail?: Record<string, unknown>): void {
    const seconds = (performance.now() - startedAt) / 1000;
    let byStatus = this.series.get(route);
    if (!byStatus) this.series.set(route, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) byStatus.set(status, (s = { labels: { route, status }, latency: new LatencyHistogram(DURATION_BUCKETS) }));
    s.latency.observe(seconds);
    // a probe's 503 (/healthz, /readyz) is its answer, not a fault of the server (its causes are logged where they
    // arise); its 500 is one
    if (status >= 500 && !(status === 503 && (route === '/healthz' || route === '/readyz')))
      this.log.log('error', 'http.server_error', {
        method: request.method,
        route,
        path: new URL(request.url).pathname,
        status,
        ms: Math.round(seconds * 1000),
        ...detail,
      });
  }

  /** Both families in `registry`, read at each scrape (HELP and TYPE also with no request yet). */
  register(registry: Registry): void {
    const each = (put: (labels: Series['labels'], latency: LatencyHistogram) => void) => {
      for (const byStatus of this.series.values())
        for (const { labels, latency } of byStatus.values()) put(labels, latency);
    };
    histogram<'route' | 'status'>(
      registry,
      DURATION,
      'Time from a request reaching its route to its response, by route and status.',
      each,
      (labels, le) => ({ le, ...labels }),
    );
    counter(registry, REQUESTS, 'HTTP requests by route and status.', ['route', 'status'], (add) =>
      each((labels, latency) => add(labels, latency.count)),
    );
  }
}
