import { Counter, Histogram, Registry } from 'prom-client';
import type { Logger } from '../log.ts';

/** Request latency buckets (seconds): the APIs answer in ms; a platform call may take up to its time-out. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The HTTP figures of /metrics, kept with prom-client (measured under Bun: an observation through a cached label
 * child costs well under a µs): a latency histogram and a request counter by route and status. A 5xx also gets a
 * log line, so an operator alerted by the 5xx rate finds the requests in the journal.
 */
export class HttpMetrics {
  private readonly duration: Histogram<'route' | 'status'>;
  private readonly requests: Counter<'route' | 'status'>;
  /** `${route} ${status}` -> its label children: prom-client hashes a label object on every call otherwise */
  private readonly children = new Map<string, { duration: Histogram.Internal<'route' | 'status'>; requests: Counter.Internal }>();

  constructor(
    readonly registry: Registry,
    private readonly log: Logger,
  ) {
    this.duration = new Histogram({
      name: 'doi_holdings_http_request_duration_seconds',
      help: 'Time from a request reaching its route to its response, by route and status.',
      labelNames: ['route', 'status'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.requests = new Counter({ name: 'doi_holdings_http_requests_total', help: 'HTTP requests by route and status.', labelNames: ['route', 'status'], registers: [registry] });
  }

  /** One answered request; `startedAt` is performance.now() when its handler began. */
  note(request: Request, route: string, status: number, startedAt: number, detail?: Record<string, unknown>): void {
    const seconds = (performance.now() - startedAt) / 1000;
    const k = `${route} ${status}`;
    let c = this.children.get(k);
    if (!c) {
      const labels = { route, status: String(status) };
      this.children.set(k, (c = { duration: this.duration.labels(labels), requests: this.requests.labels(labels) }));
    }
    c.duration.observe(seconds);
    c.requests.inc();
    if (status >= 500) this.log.log('error', 'http.server_error', { method: request.method, route, path: new URL(request.url).pathname, status, ms: Math.round(seconds * 1000), ...detail });
  }
}
