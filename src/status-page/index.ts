export { escapeHtml, type Html, HttpUrl, html, raw } from './html.ts';
export { cspAllowingStyle, PAGE_CSP } from './page-style.ts';
export {
  type PageContext,
  renderBadRequestPage,
  renderHistoryPage,
  renderNotFoundPage,
  renderTooManyRequestsPage,
} from './render.ts';
