export { loadConfig, resolveConfig } from './load.ts';
export * from './resolved.ts';
