export { type ReportLinks, renderDepositList, renderDepositReport } from './deposit-reports.ts';
export { escapeHtml, type Html, HttpUrl, html } from './html.ts';
export { PAGE_CSP } from './page-style.ts';
export { type PageContext, renderBadRequestPage, renderHistoryPage, renderNotFoundPage } from './render.ts';
