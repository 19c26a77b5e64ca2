export { renderEntitlementMetrics } from './entitlement-metrics.ts';
export { HttpMetrics } from './http-metrics.ts';
export { renderMetrics } from './store-metrics.ts';
