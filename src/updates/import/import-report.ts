import type { RowFaultCode } from '../../base/index.ts';

/** What an import of one update source did with its rows: counted, never thrown. */
export interface ImportReport {
  /** data rows (CSV) or works (JSON) read */
  rows: number;
  /** update objects produced */
  used: number;
  /** reason code -> rows skipped for it */
  skipped: Partial<Record<RowFaultCode, number>>;
  /** the first skipped rows (MAX_FIRST_SKIPPED), for the operator */
  firstSkipped: { line: number; code: RowFaultCode; message: string }[];
}

export const MAX_FIRST_SKIPPED = 20;

export function newReport(): ImportReport {
  return { rows: 0, used: 0, skipped: {}, firstSkipped: [] };
}

export function skip(report: ImportReport, line: number, code: RowFaultCode, message: string): void {
  report.skipped[code] = (report.skipped[code] ?? 0) + 1;
  if (report.firstSkipped.length < MAX_FIRST_SKIPPED) report.firstSkipped.push({ line, code, message });
}

/**
 * Rows were skipped for faults of the input, which an operator should look at (the log line is a warning, the
 * CLI exits 1). A relation a publisher deposited both ways (MIRRORED_RELATION) is not one: it is read the one
 * right way, as designed, and only counted.
 */
export function skippedFaults(report: Pick<ImportReport, 'skipped'>): boolean {
  return Object.keys(report.skipped).some((code) => code !== 'MIRRORED_RELATION');
}
