export { type IntegratorLimitName, IntegratorLimits } from './integrator-limits.ts';
export { limitItem, policyItem, retryAfterSeconds, tooManyRequests, withFields } from './rate-fields.ts';
