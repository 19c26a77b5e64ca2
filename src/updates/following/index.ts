export { IMPORT_CHILD_ARG, importInProcess } from './child-process.ts';
export { FollowedSources, type SourceStatus } from './followed-sources.ts';
export { harvestInProcess } from './harvest-process.ts';
export { runImportChild } from './import-child.ts';
export { loadUrlState, nextUrlState, type UrlSourceState } from './url-state.ts';
