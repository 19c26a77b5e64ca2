export { crossrefWorks, readCrossref, rowsOfWork, type CrossrefWork } from './crossref.ts';
export { csvRecords, type CsvRecord } from './csv.ts';
export { commitEvery, importUpdates, type ImportResult } from './import-into-stores.ts';
export { newReport, skippedFaults, type ImportReport } from './import-report.ts';
export { readRows, readUpdates, type ParsedUpdates } from './read-rows.ts';
export { readRetractionWatch } from './retraction-watch.ts';
export { detectFormat, importSource, openSource, type ConditionalState, type SourceResult } from './source.ts';
export { normaliseUpdateType } from './update-type.ts';
