export { type StoreLocation, type StoreReadRequest, storeReadJob } from './read-job.ts';
export { Reloading, type StoreRead, type WarmRead } from './reloading.ts';
