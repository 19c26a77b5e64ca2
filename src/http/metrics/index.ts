export { registerEntitlementMetrics } from './entitlement-metrics.ts';
export { HttpMetrics } from './http-metrics.ts';
export { registerLimitMetrics } from './limit-metrics.ts';
export { counter, gauge, processRegistry, scrape } from './registry.ts';
export { registerStoreMetrics } from './store-metrics.ts';
export { registerWebhookMetrics } from './webhook-metrics.ts';
