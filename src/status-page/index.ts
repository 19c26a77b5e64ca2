export { type ReportLinks, renderDepositList, renderDepositReport } from './deposit-reports.ts';
export { escapeHtml, type Html, HttpUrl, html } from './html.ts';
export { cspAllowingStyle, PAGE_CSP, pageHead } from './page-style.ts';
export {
  type PageContext,
  renderBadRequestPage,
  renderHistoryPage,
  renderNotFoundPage,
  renderTooManyRequestsPage,
} from './render.ts';
