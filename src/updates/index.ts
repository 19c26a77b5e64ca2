export { UpdateObject, type WorkUpdate } from './schema.ts';
export { normaliseUpdateType } from './update-type.ts';
export { parseSourceDate, fromDateParts } from './dates.ts';
export { csvRecords, type CsvRecord } from './csv.ts';
export { readRetractionWatch } from './retraction-watch.ts';
export { readCrossref, crossrefWorks } from './crossref.ts';
export { newReport, type ImportReport } from './import-report.ts';
