export {
  UpdateObject,
  UpdateFormat,
  UPDATE_FORMATS,
  updateIdentity,
  type WorkUpdate,
  type ImportRow,
} from '../update-record/index.ts';
export { normaliseUpdateType } from './import/index.ts';
export { parseSourceDate, fromDateParts, compareSourceDates } from '../update-record/index.ts';
export { csvRecords, type CsvRecord } from './import/index.ts';
export { readRetractionWatch } from './import/index.ts';
export { readCrossref, crossrefWorks } from './import/index.ts';
export { newReport, skippedFaults, type ImportReport } from './import/index.ts';
export { readRows, readUpdates, type ParsedUpdates } from './import/index.ts';
export { importUpdates, type ImportResult } from './import/index.ts';
export { importSource, openSource, detectFormat, type SourceResult, type ConditionalState } from './import/index.ts';
export { FollowedSources, type SourceStatus } from './following/index.ts';
export { loadUrlState, nextUrlState, type UrlSourceState } from './following/index.ts';
export { harvestInProcess } from './following/index.ts';
export {
  CrossrefHarvest,
  HARVEST_ORIGIN,
  loadState,
  type HarvestProgress,
  type HarvestState,
  type WindowFigures,
} from './harvest/index.ts';
export { idleSchedulingWorks, importInProcess, IMPORT_CHILD_ARG, priorityArgv } from './following/index.ts';
export { runImportChild } from './following/index.ts';
