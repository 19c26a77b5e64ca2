export { handleEntitlements, type EntitlementEnv } from './route.ts';
