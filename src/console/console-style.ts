import { cspAllowingStyle } from '../status-page/index.ts';

/**
 * The console's only style sheet, inline and allowed by its hash in the CSP (the status page's discipline:
 * status-page/page-style.ts): no script, no outside asset. Wide tables keep a width their columns read at (a file
 * name squeezed to one letter a line reads as nothing) and scroll inside their own box, so a 390 px phone never
 * scrolls the page sideways.
 */
export const CONSOLE_STYLE = `
:root{--ink:#1b1f24;--muted:#4b5563;--line:#d5d9de;--paper:#fff;--alert:#b3261e;--ok:#1d6b35;--caution-ink:#6b4300;--bar:#0b57d0}
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:var(--ink);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:#0b57d0}
a:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.site{background:var(--ink);color:#fff;padding:.5rem 0}
.site div,main,footer{max-width:76rem;margin:0 auto;padding-left:1rem;padding-right:1rem}
.site div{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;align-items:baseline}
.site p{margin:0;font-weight:600}
.site nav ul{list-style:none;margin:0;padding:0;display:flex;gap:1rem}
.site a{color:#fff}
.site a[aria-current]{font-weight:700;text-decoration-thickness:3px}
.staging{background:#fde68a;color:#3b2a00;padding:.4rem 1rem;text-align:center;font-weight:600}
main{padding-top:.75rem;padding-bottom:1rem}
h1{font-size:1.4rem;margin:.4rem 0 .25rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.5rem 0 .4rem}
.meta{color:var(--muted);font-size:.9rem;margin:.2rem 0}
.box{background:var(--paper);border:1px solid var(--line);border-radius:.5rem;padding:.25rem .75rem .5rem;overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
table.wide{min-width:46rem}
td.file{min-width:15rem}
caption{text-align:left;color:var(--muted);padding:.4rem 0;font-size:.88rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tfoot th,tfoot td{border-bottom:0}
code{font-size:.86rem;overflow-wrap:anywhere}
td code{white-space:normal}
.bad{color:var(--alert);font-weight:600}
.good{color:var(--ok);font-weight:600}
.warn{color:var(--caution-ink);font-weight:600}
.empty{color:var(--muted);margin:.5rem 0}
figure{margin:0}
figcaption{color:var(--muted);font-size:.88rem;padding:.4rem 0}
svg{display:block;width:100%;height:auto;max-height:14rem}
svg .bar{fill:var(--bar)}
svg .axis{stroke:var(--line)}
svg text{fill:var(--muted);font-size:11px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.5rem 0}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
footer{padding-bottom:2rem;color:var(--muted);font-size:.88rem}
@media (max-width:30rem){.site div,main,footer{padding-left:.6rem;padding-right:.6rem}h1{font-size:1.2rem}dl{grid-template-columns:1fr}dt{margin-top:.3rem}}
`.trim();

export const CONSOLE_CSP = cspAllowingStyle(CONSOLE_STYLE);
