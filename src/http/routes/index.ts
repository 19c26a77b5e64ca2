export { ApiKeys, type KeyedAnswer, keyedPost, ReportKeys } from './api-keys.ts';
export { handleByPrefix, handleChanges, handlePrefixes } from './changes-route.ts';
export { CONSOLE_PREFIX, ConsoleKey, handleConsole } from './console-route.ts';
export { DEPOSITS_PREFIX, handleDepositReports } from './deposit-reports-route.ts';
export { DirectRoutes, directRoutesOf, type RouteHandler, setDirectRoutes } from './direct-routes.ts';
export { PageCache } from './page-cache.ts';
export { handleStatusPage, STATUS_PAGE_PREFIX, type StatusEnv } from './status-route.ts';
export { handleSubscriptions, SUBSCRIPTIONS_PATH, type SubscriptionsHere } from './subscriptions-route.ts';
// the request and reply schemas, one TypeBox schema each: the routes check with them, /openapi.json publishes them
export * from './subscriptions-schema.ts';
export { handleUpdates } from './updates-route.ts';
export * from './updates-schema.ts';
