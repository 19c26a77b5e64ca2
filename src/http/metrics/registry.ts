import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { LatencyHistogram } from '../../entitlement/index.ts';

/**
 * The one metrics registry of /metrics (prom-client): every family is read from the running parts at each
 * scrape, through the helpers here. The hot paths (a request's latency, a platform call's) count into a
 * LatencyHistogram of their own, a loop and two adds per observation: prom-client's observe and inc hash the
 * label object on every call, about 0.5 µs a request, a measurable share of an empty change-feed poll.
 */

type Labels<L extends string> = Record<L, string | number>;

/**
 * A registry with prom-client's process figures (under Bun, measured: process figures, event-loop lag, heap and
 * open descriptors all read correctly), less those Bun cannot give.
 */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Under Bun these report nothing (the _total gauges always 0, the by-type ones no samples), and a gauge named
  // *_total breaks Prometheus' naming rules (`promtool check metrics` fails on it); prom-client offers no opt-out.
  for (const name of ['handles', 'requests', 'resources'].flatMap((what) => [
    `nodejs_active_${what}`,
    `nodejs_active_${what}_total`,
  ]))
    registry.removeSingleMetric(name);
  return registry;
}

/** which scrape is under way: `scrape` counts them, and oncePerScrape's values belong to one */
let scrapeNumber = 0;

/** The text of /metrics: every family read now. Values read through oncePerScrape are read anew for it. */
export function scrape(registry: Registry): Promise<string> {
  scrapeNumber++;
  return registry.metrics();
}

/**
 * `read` made once per scrape, however many families ask. Families read from one value agree with each other (the
 * change feed's commit and lineage), and a costly read (each subscription's pending events) is paid once, not
 * once a family.
 */
export function oncePerScrape<T>(read: () => T): () => T {
  let value: { v: T; scrape: number } | undefined;
  return () => {
    if (value?.scrape !== scrapeNumber) value = { v: read(), scrape: scrapeNumber };
    return value.v;
  };
}

/** What a family's `read` is given at each scrape: `put` sets a gauge's sample, or adds to a counter's from 0. */
type ScrapeRead<L extends string> = (put: (labels: Labels<L>, value: number) => void) => void;

/** A metric of `Kind` emptied and filled again from `read` at each scrape. */
function readAtScrape(Kind: typeof Gauge | typeof Counter) {
  return <L extends string>(registry: Registry, name: string, help: string, labelNames: L[], read: ScrapeRead<L>) => {
    new Kind({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        if (this instanceof Gauge) read((labels, value) => this.set(labels as never, value));
        else read((labels, value) => this.inc(labels as never, value));
      },
    });
  };
}

/** A gauge whose samples are read at scrape time; series no longer reported (a source removed by a reload) go. */
export const gauge = readAtScrape(Gauge);

/** A counter read from the running parts at each scrape: their own counts, which only grow while the process runs. */
export const counter = readAtScrape(Counter);

/**
 * A histogram kept by a hot path in LatencyHistograms (one per series), given to prom-client as its samples at
 * each scrape: `le` goes where `withLe` puts it among the series' labels.
 */
export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  read: (put: (labels: Labels<L>, latency: LatencyHistogram) => void) => void,
  withLe: (labels: Labels<L>, le: string) => Record<string, string | number> = (labels, le) => ({ ...labels, le }),
): void {
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
      read((labels, latency) => {
        for (const [le, n] of latency.cumulative())
          values.push({ metricName: `${name}_bucket`, labels: withLe(labels, le), value: n });
        values.push({ metricName: `${name}_sum`, labels, value: latency.sum });
        values.push({ metricName: `${name}_count`, labels, value: latency.count });
      });
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    reset: () => undefined,
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** A sample: its labels and value. */
export type Sample = [Record<string, string | number>, number];

/**
 * A family of samples read at each scrape, gauge or counter: the samples as [labels, value] pairs, made when
 * Prometheus asks.
 */
export function familyOf(registry: Registry) {
  return <L extends string>(
    name: string,
    type: 'gauge' | 'counter',
    help: string,
    labelNames: L[],
    samples: () => Sample[],
  ) =>
    (type === 'gauge' ? gauge : counter)(registry, name, help, labelNames, (put) => {
      for (const [labels, value] of samples()) put(labels as Labels<L>, value);
    });
}
