export { AddressLimits, MAX_READERS } from './address-limits.ts';
export { ClientAddresses, notePeer, readerKey } from './client-address.ts';
export { type IntegratorLimitName, IntegratorLimits } from './integrator-limits.ts';
export { limitItem, policyItem, retryAfterSeconds, tooManyRequests, withFields } from './rate-fields.ts';
