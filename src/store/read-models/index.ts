export { storeReadJob, type StoreLocation, type StoreReadRequest } from './read-job.ts';
export { Reloading, type StoreRead, type WarmRead } from './reloading.ts';
