export { type AddressBlock, parseAddressBlock } from './address-block.ts';
export { BUILT_IN_SOURCE, loadConfig, resolveConfig } from './load.ts';
export * from './resolved.ts';
