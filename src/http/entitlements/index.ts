export { type EntitlementEnv, handleEntitlements } from './route.ts';
