export { DepositReport, DepositReportPage } from './deposit-report-paths.ts';
export { openApiDocument } from './document.ts';
