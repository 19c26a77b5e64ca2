export { renderBadRequestPage, renderHistoryPage, renderNotFoundPage, type PageContext } from './render.ts';
export { PAGE_CSP } from './page-style.ts';
export { escapeHtml, html, HttpUrl, type Html } from './html.ts';
