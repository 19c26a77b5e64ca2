export { type StoreLocation, type StoreReadRequest, storeReadJob } from './read-job.ts';
export { readThenClose } from './read-then-close.ts';
export { Reloading, type StoreRead, type WarmRead } from './reloading.ts';
