import type { Registry } from 'prom-client';
import type { Webhooks } from '../../webhooks/index.ts';
import { counter, gauge, oncePerScrape } from './registry.ts';

/** Push alerts' figures (docs/operations.md, "Push alerts"), read at each scrape on the delivering replica. */
export function registerWebhookMetrics(registry: Registry, webhooks: Webhooks): void {
  // each subscription's pending events are counted once a scrape, for the four families that show them
  const figures = oncePerScrape(() => webhooks.figures());
  counter(
    registry,
    'doi_holdings_webhook_deliveries_total',
    'Delivery attempts since start, by outcome (delivered, http_error, timeout, connection_failed, refused, redirect).',
    ['outcome'],
    (add) => {
      for (const [outcome, n] of webhooks.deliveries.outcomes) add({ outcome }, n);
    },
  );
  gauge(
    registry,
    'doi_holdings_webhook_lag_seconds',
    'How long the oldest event a subscription still has to be sent has waited since it was taken from the change feed (0: none waits).',
    ['subscription', 'integrator'],
    (set) => {
      for (const f of figures()) set({ subscription: f.id, integrator: f.integrator }, f.lagSeconds);
    },
  );
  gauge(
    registry,
    'doi_holdings_webhook_pending_events',
    'Events a subscription still has to be sent.',
    ['subscription', 'integrator'],
    (set) => {
      for (const f of figures()) set({ subscription: f.id, integrator: f.integrator }, f.pending);
    },
  );
  gauge(
    registry,
    'doi_holdings_webhook_subscriptions',
    'Subscriptions, by whether they are paused (by their owner, or by a delivery failing for the whole retry period).',
    ['paused'],
    (set) => {
      const all = figures();
      const paused = all.filter((f) => f.paused).length;
      set({ paused: 'true' }, paused);
      set({ paused: 'false' }, all.length - paused);
    },
  );
  // per subscription, so that the lag alert leaves out the paused ones (their lag is known and said)
  gauge(
    registry,
    'doi_holdings_webhook_subscription_paused',
    'Whether a subscription is paused (1), by its owner or by a delivery failing for the whole retry period.',
    ['subscription', 'integrator'],
    (set) => {
      for (const f of figures()) set({ subscription: f.id, integrator: f.integrator }, f.paused ? 1 : 0);
    },
  );
  gauge(registry, 'doi_holdings_webhook_deliveries_in_flight', 'Deliveries under way now.', [], (set) =>
    set({}, webhooks.deliveries.active),
  );
}
