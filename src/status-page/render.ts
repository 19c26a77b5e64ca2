import {
  accessLabel,
  type CurrentHolding,
  type DocumentHistory,
  type DocumentStatus,
  type HistoryEvent,
  type HoldingChangeEvent,
  type NoticeEvent,
  replacedNoticeDois,
  type StatusCode,
  sourceLabel,
  stateOfNotice,
} from '../history/index.ts';
import { type Html, HttpUrl, html } from './html.ts';
import { PAGE_STYLE, pageHead } from './page-style.ts';

/**
 * The document status page (docs/interface.md, "Document status page"): server-rendered HTML, no script, every
 * value through the escaping `html` template (html.ts). Deposit file names never reach it: events carry dates.
 */

export interface PageContext {
  /** the staging environment: a banner says so */
  staging: boolean;
}

const EXPLAIN: Record<StatusCode, string> = {
  retracted:
    'This article has been retracted. Its findings should not be relied on; the notice is in the history below.',
  withdrawn: 'This article has been withdrawn or removed by its publisher.',
  partial_retraction: 'Part of this article has been retracted; the notice is in the history below.',
  expression_of_concern: 'The publisher or editors have published an expression of concern about this article.',
  replaced: 'The publisher replaced the original article with a corrected version (retract and replace).',
  corrected: 'A correction to this article has been published.',
  reinstated: 'A reinstatement notice restores this article to the record.',
  updated: 'Notices about this article have been published; none of them changes its standing.',
  none: 'No retraction, correction or expression of concern is known for this article.',
};

export function renderHistoryPage(h: DocumentHistory, ctx: PageContext): string {
  const replaced = replacedNoticeDois(
    h.events.flatMap((e) => (e.kind === 'notice' && !e.withdrawn && !e.reclassified ? [asNotice(e)] : [])),
  );
  const body = html`<h1><span class="meta">DOI</span> <a href="${HttpUrl.ofDoi(h.doi)}">${h.doi}</a></h1>
${statusBlock(h.status)}
${h.holdings.length > 0 ? holdingsBlock(h.holdings) : ''}
<h2 id="history">History</h2>
${h.events.length > 0 ? html`<ol class="timeline" aria-labelledby="history">${h.events.map((e) => eventItem(e, replaced))}</ol>` : html`<p>No events are recorded.</p>`}`;
  return page(`${h.status.label}: ${h.doi}`, body, ctx, true);
}

/** Unknown DOI (404): says that no history is known. */
export function renderNotFoundPage(doi: string, ctx: PageContext): string {
  const body = html`<h1><span class="meta">DOI</span> ${doi}</h1>
<div class="status tone-neutral"><p class="badge">No history known</p>
<p>This service knows no holdings and no update notices for this DOI. It may still exist:
<a href="${HttpUrl.ofDoi(doi)}">look it up at doi.org</a>.</p></div>`;
  return page(`No history known: ${doi}`, body, ctx, false);
}

/** A path that is not a DOI (400): what was asked and why it is not a DOI, as text. */
export function renderBadRequestPage(sent: string, problem: string, ctx: PageContext): string {
  const body = html`<h1>Not a DOI</h1>
<div class="status tone-caution">
<p>The address asks for <code>${JSON.stringify(sent)}</code>: ${problem.replace(/^not a DOI: /, '')}.</p>
<p>Status pages are at <code>/doi/10.</code><var>registrant</var><code>/</code><var>suffix</var>.</p></div>`;
  return page('Not a DOI', body, ctx, false);
}

/** A reader over the status page's limit (429): when to come back. */
export function renderTooManyRequestsPage(retryAfterSeconds: number, ctx: PageContext): string {
  const body = html`<h1>Too many pages asked</h1>
<div class="status tone-caution">
<p>This address has asked for more status pages than the service answers in a while.
Please try again in ${String(retryAfterSeconds)} seconds.</p></div>`;
  return page('Too many pages asked', body, ctx, false);
}

function page(title: string, body: Html, ctx: PageContext, history: boolean): string {
  return pageShell(
    title,
    'Document status',
    body,
    ctx,
    history
      ? html`<footer><p>Holdings changes are dated when the platform deposited them; notices carry the date their source gives.<span class="json-link"> <a href="?format=json">This history as JSON</a>.</span></p></footer>`
      : html``,
  );
}

/** The one page around every server-rendered body (status pages, deposit reports): its head, style and banner. */
export function pageShell(title: string, site: string, body: Html, ctx: PageContext, footer: Html): string {
  return html`<!doctype html>
<html lang="en">
${pageHead(`${title} · ${site}`, PAGE_STYLE)}
<body>
<header class="site"><p>${site}</p></header>
${ctx.staging ? html`<p class="staging">Staging: test data, not the production record</p>` : ''}
<main>
${body}
</main>
${footer}
</body>
</html>
`.text;
}

function statusBlock(s: DocumentStatus): Html {
  return html`<section class="status tone-${s.tone}" aria-label="Status">
<p class="badge">${s.label}</p>
<p>${EXPLAIN[s.code]}</p>
${s.date ? html`<p class="meta">Latest deciding notice: ${s.date}, ${sourceLabel(s.source ?? '')}.</p>` : ''}
</section>`;
}

function holdingsBlock(holdings: readonly CurrentHolding[]): Html {
  return html`<h2 id="platforms">Platforms</h2>
<ul class="holdings" aria-labelledby="platforms">${holdings.map(
    (p) =>
      html`<li><strong>${p.platform}</strong>: ${p.held ? (p.accessType ? accessLabel(p.accessType) : 'held, access type not given') : 'removed'}</li>`,
  )}</ul>`;
}

function eventItem(e: HistoryEvent, replaced: ReadonlySet<string>): Html {
  return e.kind === 'notice' ? noticeItem(e, replaced) : holdingItem(e);
}

function noticeItem(e: NoticeEvent, replaced: ReadonlySet<string>): Html {
  const state = stateOfNotice(asNotice(e), replaced);
  const standing = !e.withdrawn && !e.reclassified;
  const tone = !standing
    ? 'neutral'
    : state === 'retracted'
      ? 'alert'
      : state && state !== 'reinstated'
        ? 'caution'
        : 'neutral';
  // a link reads as where it goes (its parsed form, not the source's text: a right-to-left override in that text
  // can make evil.example look like another host); the notice's own doi.org link is shown once, as the notice (sources write it unencoded); other links after it
  const noticeUrls = e.noticeDoi
    ? new Set([HttpUrl.ofDoi(e.noticeDoi).href, HttpUrl.parse(`https://doi.org/${e.noticeDoi}`)?.href])
    : new Set();
  const links = e.urls
    .map((u) => [u, HttpUrl.parse(u)] as const)
    .filter(([, url]) => !url || !noticeUrls.has(url.href));
  return html`<li class="event notice tone-${tone}${standing ? '' : ' withdrawn'}">
<time datetime="${e.date}">${e.date}</time>
<h3>${e.label}</h3>
<p>Source: ${sourceLabel(e.source)}${e.withdrawn ? html` (no longer listed by this source)` : ''}</p>
${e.reclassified ? html`<p class="reclassified">Replaced: re-classified as ${article(e.reclassified.label)} on <time datetime="${e.reclassified.date}">${e.reclassified.date}</time></p>` : ''}
${e.noticeDoi ? html`<p>Notice: <a href="${HttpUrl.ofDoi(e.noticeDoi)}">${e.noticeDoi}</a></p>` : html`<p>Notice: no DOI given</p>`}
${e.reasons.length > 0 ? html`<p>Reasons:</p><ul>${e.reasons.map((r) => html`<li>${r}</li>`)}</ul>` : ''}
${links.length > 0 ? html`<p>Links:</p><ul>${links.map(([text, url]) => html`<li>${url ? html`<a class="url" href="${url}">${url.href}</a>` : text}</li>`)}</ul>` : ''}
</li>`;
}

/** "a correction", "an expression of concern": a nature's label in running text. */
function article(label: string): string {
  const lower = label.toLowerCase();
  return `${/^[aeiou]/.test(lower) ? 'an' : 'a'} ${lower}`;
}

/** A notice event as the status rule reads notices. */
function asNotice(e: NoticeEvent): { updateType: string; reasons: string[]; updateDoi: string | null } {
  return { updateType: e.updateType, reasons: e.reasons, updateDoi: e.noticeDoi };
}

const CHANGE_TITLES: Record<HoldingChangeEvent['change'], string> = {
  added: 'Added by',
  're-added': 'Added again by',
  changed: 'Changed by',
  removed: 'Removed by',
};

function holdingItem(e: HoldingChangeEvent): Html {
  return html`<li class="event holding">
<time datetime="${e.date}">${e.date.slice(0, 10)} ${e.date.slice(11, 16)} UTC</time>
<h3>${CHANGE_TITLES[e.change]} ${e.platform}</h3>
${holdingDetails(e).map((line) => html`<p>${line}</p>`)}
</li>`;
}

function holdingDetails(e: HoldingChangeEvent): string[] {
  const access = (a: string | undefined) => (a ? accessLabel(a) : 'no access type given');
  switch (e.change) {
    case 'added':
    case 're-added':
      return [`Access: ${access(e.accessType)}`];
    case 'removed':
      return [`Was: ${access(e.previousAccessType)}`];
    case 'changed': {
      const changed = e.changed ?? [];
      const lines: string[] = [];
      if (changed.includes('access')) lines.push(`Access: ${access(e.previousAccessType)} → ${access(e.accessType)}`);
      if (changed.includes('links')) lines.push('Links to the full text changed');
      if (changed.includes('doi')) lines.push('The DOI’s spelling (letter case) changed');
      if (lines.length === 0) lines.push('Details were not recorded');
      return lines;
    }
  }
}
