export { type CrossrefWork, crossrefWorks, readCrossref, rowsOfWork } from './crossref.ts';
export { type CsvRecord, csvRecords } from './csv.ts';
export { commitEvery, type ImportResult, importUpdates } from './import-into-stores.ts';
export { type ImportReport, newReport, skippedFaults } from './import-report.ts';
export { type ParsedUpdates, readRows, readUpdates } from './read-rows.ts';
export { readRetractionWatch } from './retraction-watch.ts';
export {
  type ConditionalState,
  detectFormat,
  importFigures,
  importSource,
  openSource,
  type SourceResult,
} from './source.ts';
export { normaliseUpdateType } from './update-type.ts';
