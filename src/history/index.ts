export { documentHistory, historyOf } from './document-history.ts';
export { documentStatus, replacedNoticeDois, stateOfNotice } from './document-status.ts';
export { accessLabel, sourceLabel, updateTypeLabel } from './labels.ts';
export * from './schema.ts';
