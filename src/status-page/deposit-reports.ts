import type { FileReport } from '../store/index.ts';
import { type HttpUrl, html } from './html.ts';
import { type PageContext, pageShell } from './render.ts';

/**
 * A platform's deposit reports for people (docs/interface.md, "Deposit reports"): the same reports the JSON routes
 * give, through the escaping `html` template, since every file name and rejected line is the publisher's text.
 */

const SITE = 'Deposit reports';

/** Where a page's links go: paths on this site, made by the route (HttpUrl.sitePath). A file without one is not linked. */
export interface ReportLinks {
  file(key: string): HttpUrl | undefined;
  next?: HttpUrl;
}

/** A page of a platform's files, newest first: one row each, linking to the file's whole report. */
export function renderDepositList(
  platform: string,
  reports: readonly FileReport[],
  links: ReportLinks,
  ctx: PageContext,
): string {
  const rows = reports.map((r) => {
    const link = links.file(r.key);
    return html`<tr><td>${link ? html`<a href="${link}">${r.key}</a>` : r.key}</td><td>${r.lastModified}</td>
<td>${r.recordedAt}</td><td>${outcomeText(r)}</td><td>${counted(r, 'records')}</td><td>${counted(r, 'rejected')}</td></tr>`;
  });
  const body = html`<h1>${platform}: deposited files</h1>
${
  reports.length === 0
    ? html`<p>No files of this platform are in the ledger${links.next ? '' : ' yet'}.</p>`
    : html`<table>
<thead><tr><th>File</th><th>LastModified</th><th>Decided</th><th>Outcome</th><th>Records</th><th>Rejected</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}
${links.next ? html`<p><a href="${links.next}">Older files</a></p>` : ''}`;
  return pageShell(`${platform}: deposited files`, SITE, body, ctx, html``);
}

/** One file's report: its outcome, counts and the rejected lines the ledger keeps. */
export function renderDepositReport(report: FileReport, ctx: PageContext): string {
  const counts = (report.counts ?? {}) as Record<string, number>;
  const rejected = report.rejectedLines ?? [];
  const total = counts.rejected ?? rejected.length;
  const body = html`<h1>${report.key}</h1>
<p><strong>${outcomeText(report)}</strong>${report.message ? html`: ${String(report.message)}` : ''}</p>
<dl>
<dt>LastModified</dt><dd>${report.lastModified}</dd>
<dt>Decided</dt><dd>${report.recordedAt}</dd>
${Object.entries(counts).map(([name, n]) => html`<dt>${name}</dt><dd>${n}</dd>`)}
</dl>
${
  rejected.length > 0
    ? html`<h2>Rejected lines${total > rejected.length ? html` (the first ${rejected.length} of ${total})` : ''}</h2>
<table>
<thead><tr><th>Line</th><th>Field</th><th>Code</th><th>Reason</th></tr></thead>
<tbody>${rejected.map((l) => html`<tr><td>${l.line}</td><td>${l.path}</td><td>${l.code}</td><td>${l.message}</td></tr>`)}</tbody>
</table>`
    : ''
}
${(report.conflicts ?? []).map((c) => html`<p>${c.code}: ${c.message}</p>`)}`;
  return pageShell(report.key, SITE, body, ctx, html``);
}

function outcomeText(r: FileReport): string {
  return r.outcome === 'applied' ? 'applied' : `quarantined${r.code ? ` (${String(r.code)})` : ''}`;
}

function counted(r: FileReport, name: 'records' | 'rejected'): number | string {
  return (r.counts as Record<string, number> | undefined)?.[name] ?? '';
}
