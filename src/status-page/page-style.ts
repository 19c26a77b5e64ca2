import { createHash } from 'node:crypto';
import { type Html, html, raw } from './html.ts';

/**
 * The status page's only style sheet, inline (no external assets), allowed by its hash in the
 * Content-Security-Policy, so no other style and no script can run. One column that reads on a 390 px phone and
 * a desktop, and prints in black on white with the addresses of links written out.
 */
export const PAGE_STYLE = `
:root{--ink:#1b1f24;--muted:#4b5563;--line:#d5d9de;--paper:#fff;--alert:#b3261e;--caution-bg:#fff4d6;--caution-ink:#6b4300;--caution-line:#b7791f;--neutral-bg:#eef1f4}
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:#0b57d0}
a:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.site{background:var(--ink);color:#fff;padding:.6rem 0;font-size:.95rem}
.site p,main,footer{max-width:46rem;margin:0 auto;padding-left:1rem;padding-right:1rem}
.staging{background:#fde68a;color:#3b2a00;padding:.4rem 1rem;text-align:center;font-weight:600}
main{padding-top:1rem;padding-bottom:1rem}
code{overflow-wrap:anywhere}
h1{font-size:1.45rem;line-height:1.3;margin:.5rem 0 .75rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.75rem 0 .5rem}
h3{font-size:1rem;margin:0}
.status{background:var(--paper);border:1px solid var(--line);border-radius:.5rem;padding:1rem}
.badge{display:inline-block;margin:0 0 .5rem;padding:.25rem .75rem;border-radius:999px;font-weight:700;font-size:1.05rem;border:2px solid transparent;print-color-adjust:exact;-webkit-print-color-adjust:exact}
.tone-alert .badge{background:var(--alert);color:#fff}
.tone-caution .badge{background:var(--caution-bg);color:var(--caution-ink);border-color:var(--caution-line)}
.tone-neutral .badge{background:var(--neutral-bg);color:var(--ink);border-color:var(--line)}
.tone-alert{border-left:6px solid var(--alert)}
.tone-caution{border-left:6px solid var(--caution-line)}
.status p{margin:.25rem 0}
.meta{color:var(--muted);font-size:.92rem}
.holdings{padding-left:1.2rem;margin:.25rem 0}
.timeline{list-style:none;margin:0;padding:0;border-left:3px solid var(--line)}
.event{position:relative;margin:0 0 1rem;padding:.6rem .9rem;margin-left:1rem;background:var(--paper);border:1px solid var(--line);border-radius:.5rem;overflow-wrap:anywhere}
.event::before{content:"";position:absolute;left:-1.55rem;top:1rem;width:.8rem;height:.8rem;border-radius:50%;background:var(--muted);border:2px solid #f6f7f9}
.event.tone-alert::before{background:var(--alert)}
.event.tone-caution::before{background:var(--caution-line)}
.event.tone-alert,.event.tone-caution{border-left-width:1px}
.event time{display:block;color:var(--muted);font-size:.9rem}
.event p{margin:.2rem 0}
.event ul{margin:.2rem 0;padding-left:1.2rem}
.withdrawn h3{text-decoration:line-through}
footer{padding-bottom:2rem;color:var(--muted);font-size:.9rem}
@media (max-width:30rem){.site p,main,footer{padding-left:.75rem;padding-right:.75rem}h1{font-size:1.25rem}.event{margin-left:.75rem}.event::before{left:-1.3rem}}
@media print{body{background:#fff;font-size:11pt}.site{background:none;color:#000;border-bottom:1px solid #000;padding:0 0 .3rem}.site p,main,footer{max-width:none;padding-left:0;padding-right:0}.status,.event{border-color:#999;break-inside:avoid}.status.tone-alert{border-left-color:var(--alert)}a{color:#000}.event a[href]:not(.url)::after{content:" <" attr(href) ">";font-size:.85em;overflow-wrap:anywhere}.json-link{display:none}}
`.trim();

/**
 * The Content-Security-Policy of a page whose only style is the inline sheet `style`, allowed by its hash: no
 * script, no fetch, no frame, no form; only that style and the page's own data: favicon. The status page's, and
 * the operator console's (src/console/) with its own sheet.
 */
export function cspAllowingStyle(style: string): string {
  const source = `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
  return `default-src 'none'; style-src ${source}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

export const PAGE_CSP = cspAllowingStyle(PAGE_STYLE);

/**
 * A page's head: its one inline style sheet (which the CSP allows by hash), no referrer sent on, and no request
 * for a favicon. The status page and the operator console both start with it.
 */
export function pageHead(title: string, style: string): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${raw(style)}</style>
</head>`;
}
