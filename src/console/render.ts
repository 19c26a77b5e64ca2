import type { EnvName } from '../config/index.ts';
import { type Html, HttpUrl, html, raw } from '../status-page/index.ts';
import { conflictFault, type FileEntry } from '../store/index.ts';
import type { FileReport, Overview, PlatformRow, SourceRow } from './console.ts';
import { CONSOLE_STYLE } from './console-style.ts';
import { dayChart } from './day-chart.ts';

/**
 * The operator console's pages: server-rendered HTML, every value through the status page's escaping `html`
 * template (status-page/html.ts), no script. A file's report is a thin view over its ledger entry, as `--report`
 * prints it. A box whose table may scroll sideways on a phone is a named region that takes the focus, so that a
 * keyboard can scroll it too.
 */

/** Quarantined files and conflicts listed; `--failures` lists every one. */
const FAILURES_LISTED = 50;

export function consolePath(env: EnvName): HttpUrl {
  return HttpUrl.sitePath(['console', env])!;
}

/** The console page of a file's report, or undefined for a key no path can name (a `.` or `..` segment). */
export function filePath(env: EnvName, key: string): HttpUrl | undefined {
  return HttpUrl.sitePath(['console', env, 'files', ...key.split('/')]);
}

export function renderOverview(v: Overview): string {
  const body = html`<h1>${ENV_TITLES[v.env]}</h1>
<p class="meta">As of <time datetime="${iso(v.now)}">${when(v.now)}</time>${v.ingest ? html`; ${v.ingest.queueDepth} files waiting${v.ingest.lagSeconds > 0 ? html`, ${duration(v.ingest.lagSeconds * 1000)} behind` : ''}` : ''}.</p>
${holdingsSection(v)}
${daysSection(v)}
${latestSection(v)}
${quarantinedSection(v)}
${conflictsSection(v)}
${sourcesSection(v)}
${platformsSection(v)}`;
  return page(ENV_TITLES[v.env], v.env, v.envs, v.version, body);
}

export function renderFileReport(r: FileReport): string {
  const e = r.entry;
  const lines = e.rejectedLines ?? [];
  const body = html`<p class="meta"><a href="${consolePath(r.env)}">${ENV_TITLES[r.env]}</a> › file report</p>
<h1><code>${e.key}</code></h1>
<div class="box"><dl>
<dt>Outcome</dt><dd>${outcome(e)}</dd>
${e.code ? html`<dt>Reason</dt><dd><code>${e.code}</code>: ${e.message ?? ''}</dd>` : ''}
<dt>Platform</dt><dd>${e.platform ?? 'not known'}</dd>
${e.seq !== undefined ? html`<dt>Apply number</dt><dd>${e.seq}</dd>` : ''}
<dt>Last modified</dt><dd><time datetime="${iso(e.lastModified)}">${when(e.lastModified)}</time></dd>
<dt>Recorded</dt><dd><time datetime="${e.recordedAt}">${when(Date.parse(e.recordedAt))}</time></dd>
<dt>Size</dt><dd>${count(e.size)} bytes</dd>
<dt>SHA-256</dt><dd><code>${e.hash || 'not read'}</code></dd>
${e.timings ? html`<dt>Time</dt><dd>${ms(e.timings.readMs)} read, ${ms(e.timings.parseMs)} parse, ${ms(e.timings.applyMs)} apply</dd>` : ''}
${e.tries !== undefined ? html`<dt>Tries</dt><dd>${e.tries}</dd>` : ''}
</dl></div>
${e.outcome === 'quarantined' ? html`<p>Retry it: <code>${retryCommand(r.command, r.env, e.key)}</code></p>` : ''}
${e.counts ? countsTable(e) : ''}
<h2 id="rejected">Rejected lines</h2>
${
  lines.length > 0
    ? html`<div class="box" role="region" tabindex="0" aria-labelledby="rejected"><table class="wide" aria-labelledby="rejected">
<thead><tr><th scope="col" class="n">Line</th><th scope="col">Field</th><th scope="col">Reason</th></tr></thead>
<tbody>${lines.map((l) => html`<tr><td class="n">${l.line}</td><td><code>${l.path || '(the whole line)'}</code></td><td><code>${l.code}</code>: ${l.message}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">None.</p>`
}
${e.rejectedNotListed ? html`<p>${count(e.rejectedNotListed)} more rejected lines were counted, not kept: <code>${r.command} --validate FILE</code> lists every one.</p>` : ''}
${
  r.conflicts.length > 0
    ? html`<h2 id="conflicts">Same-name conflicts</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="conflicts"><table class="wide" aria-labelledby="conflicts"><thead><tr><th scope="col">Recorded</th><th scope="col">Size</th><th scope="col">Reason</th></tr></thead>
<tbody>${r.conflicts.map((c) => html`<tr><td><time datetime="${c.recordedAt}">${when(Date.parse(c.recordedAt))}</time></td><td class="n">${count(c.size)}</td><td>${conflictFault(c).message}</td></tr>`)}</tbody></table></div>`
    : ''
}`;
  return page(`File ${e.key}`, r.env, r.envs, r.version, body);
}

export function renderConsoleNotFound(what: string, envs: EnvName[], version: string): string {
  const body = html`<h1>Not found</h1><p>${what}</p>`;
  return page('Not found', undefined, envs, version, body);
}

const ENV_TITLES: Record<EnvName, string> = { production: 'Production', staging: 'Staging' };

function page(title: string, env: EnvName | undefined, envs: EnvName[], version: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · doi-holdings console</title>
<link rel="icon" href="data:,">
<style>${raw(CONSOLE_STYLE)}</style>
</head>
<body>
<header class="site"><div><p>doi-holdings console</p>
<nav aria-label="Environments"><ul>${envs.map((e) => html`<li><a href="${consolePath(e)}"${e === env ? html` aria-current="page"` : ''}>${ENV_TITLES[e]}</a></li>`)}</ul></nav></div>
${env === 'staging' ? html`<p class="staging">Staging: test data, not the production record</p>` : ''}</header>
<main>
${body}
</main>
<footer><p>doi-holdings ${version}. Figures are this replica's; platform figures count calls since start.</p></footer>
</body>
</html>
`.text;
}

function holdingsSection(v: Overview): Html {
  const rows = v.holdings.byPlatform;
  return html`<h2 id="holdings">Live holdings</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="holdings">${
    rows.length > 0
      ? html`<table aria-labelledby="holdings"><caption>Per platform, from the store's counters. Per access type: <code>${v.command} --stats --env ${v.env}</code></caption>
<thead><tr><th scope="col">Platform</th><th scope="col" class="n">Holdings</th></tr></thead>
<tbody>${rows.map(([p, n]) => html`<tr><td>${p}</td><td class="n">${count(n)}</td></tr>`)}</tbody>
<tfoot><tr><th scope="row">All platforms</th><td class="n">${count(v.holdings.total)}</td></tr></tfoot></table>`
      : html`<p class="empty">No holdings yet.</p>`
  }</div>`;
}

function daysSection(v: Overview): Html {
  const total = v.days.reduce((n, d) => n + d.files, 0);
  return html`<h2 id="days">Files applied per day</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="days"><figure>${dayChart(v.days)}
<figcaption>${count(total)} ${total === 1 ? 'file' : 'files'} applied over the last ${v.days.length} days (UTC), ${count(v.days.at(-1)?.files ?? 0)} today.</figcaption></figure></div>`;
}

function latestSection(v: Overview): Html {
  return html`<h2 id="latest">Latest files applied</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="latest">${
    v.latest.length > 0
      ? html`<table class="wide" aria-labelledby="latest">
<thead><tr><th scope="col">File</th><th scope="col">Applied</th><th scope="col">Outcome</th><th scope="col" class="n">Records</th><th scope="col" class="n">Added</th><th scope="col" class="n">Updated</th><th scope="col" class="n">Removed</th><th scope="col" class="n">Unchanged</th><th scope="col" class="n">Rejected</th><th scope="col" class="n">Time to apply</th></tr></thead>
<tbody>${v.latest.map((e) => {
          const c = e.counts;
          const t = e.timings;
          return html`<tr><td class="file">${fileLink(v.env, e.key)}</td><td><time datetime="${e.recordedAt}">${when(Date.parse(e.recordedAt))}</time></td><td>${outcome(e)}</td>
<td class="n">${c ? count(c.records) : ''}</td><td class="n">${c ? count(c.added) : ''}</td><td class="n">${c ? count(c.updated) : ''}</td><td class="n">${c ? count(c.removed) : ''}</td><td class="n">${c ? count(c.unchanged) : ''}</td><td class="n">${c?.rejected ? html`<span class="bad">${count(c.rejected)}</span>` : c ? '0' : ''}</td>
<td class="n">${t ? ms(t.readMs + t.parseMs + t.applyMs) : ''}</td></tr>`;
        })}</tbody></table>`
      : html`<p class="empty">No file applied yet.</p>`
  }</div>`;
}

function quarantinedSection(v: Overview): Html {
  const all = v.failures.quarantined;
  const shown = all.slice(0, FAILURES_LISTED);
  return html`<h2 id="quarantined">Quarantined files</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="quarantined">${
    shown.length > 0
      ? html`<table class="wide" aria-labelledby="quarantined">${all.length > shown.length ? html`<caption>The newest ${shown.length} of ${count(all.length)}: <code>${v.command} --failures --env ${v.env}</code> lists every one.</caption>` : ''}
<thead><tr><th scope="col">File</th><th scope="col">Recorded</th><th scope="col">Reason</th><th scope="col">Retry it with</th></tr></thead>
<tbody>${shown.map((e) => html`<tr><td class="file">${fileLink(v.env, e.key)}</td><td><time datetime="${e.recordedAt}">${when(Date.parse(e.recordedAt))}</time></td><td><code>${e.code ?? ''}</code>: ${e.message ?? ''}</td><td><code>${retryCommand(v.command, v.env, e.key)}</code></td></tr>`)}</tbody></table>`
      : html`<p class="empty">None.</p>`
  }</div>`;
}

function conflictsSection(v: Overview): Html {
  const all = v.failures.conflicts;
  const shown = all.slice(0, FAILURES_LISTED);
  return html`<h2 id="conflicts">Same-name conflicts</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="conflicts">${
    shown.length > 0
      ? html`<table class="wide" aria-labelledby="conflicts"><caption>Content deposited again under a name already applied is never applied, so no command retries it: ask the platform to deposit it under a new file name.${all.length > shown.length ? html` The newest ${shown.length} of ${count(all.length)}.` : ''}</caption>
<thead><tr><th scope="col">File</th><th scope="col">Recorded</th><th scope="col">Reason</th><th scope="col">See it with</th></tr></thead>
<tbody>${shown.map((c) => html`<tr><td class="file">${fileLink(v.env, c.key)}</td><td><time datetime="${c.recordedAt}">${when(Date.parse(c.recordedAt))}</time></td><td>${conflictFault(c).message}</td><td><code>${v.command} --report --env ${v.env} ${shellWord(c.key)}</code></td></tr>`)}</tbody></table>`
      : html`<p class="empty">None.</p>`
  }</div>`;
}

function sourcesSection(v: Overview): Html {
  return html`<h2 id="sources">Update sources</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="sources">${
    v.sources.length > 0
      ? html`<table class="wide" aria-labelledby="sources">
<thead><tr><th scope="col">Source</th><th scope="col">State</th><th scope="col">Last success</th><th scope="col" class="n">Age</th><th scope="col" class="n">Rows</th><th scope="col">Next run</th><th scope="col">Last error</th></tr></thead>
<tbody>${v.sources.map((s) => sourceRow(s, v.now))}</tbody></table>`
      : html`<p class="empty">No update source is followed by this daemon.</p>`
  }</div>`;
}

function sourceRow(s: SourceRow, now: number): Html {
  return html`<tr><td><code>${s.label}</code></td><td>${s.stale ? html`<span class="warn">stale</span>` : html`<span class="good">ok</span>`}</td>
<td>${s.lastSuccessAt ? html`<time datetime="${iso(s.lastSuccessAt)}">${when(s.lastSuccessAt)}</time>` : 'never'}</td>
<td class="n">${s.lastSuccessAt ? duration(now - s.lastSuccessAt) : ''}</td><td class="n">${s.rows !== undefined ? count(s.rows) : ''}</td>
<td>${s.nextRunAt ? html`<time datetime="${iso(s.nextRunAt)}">${when(s.nextRunAt)}</time>` : 'when a file is dropped'}</td>
<td>${s.lastError ? html`<code>${s.lastError}</code>${s.lastFailureAt ? html` at <time datetime="${iso(s.lastFailureAt)}">${when(s.lastFailureAt)}</time>` : ''}` : ''}</td></tr>`;
}

function platformsSection(v: Overview): Html {
  const index = v.index.complete
    ? html`<span class="good">complete</span>`
    : html`<span class="warn">warming</span> (lookups read the store meanwhile)`;
  return html`<h2 id="platforms">Entitlement API</h2>
<p class="meta">Holdings index: ${index}, ${count(v.index.dois)} DOIs, ${v.index.builds} full reads of the store.</p>
<div class="box" role="region" tabindex="0" aria-labelledby="platforms">${
    v.platforms.length > 0
      ? html`<table class="wide" aria-labelledby="platforms"><caption>Calls to each platform's Entitlement API since start, both environments; latency from the call histogram.</caption>
<thead><tr><th scope="col">Platform</th><th scope="col" class="n">Calls</th><th scope="col" class="n">Errors</th><th scope="col" class="n">Time-outs</th><th scope="col" class="n">p50</th><th scope="col" class="n">p95</th><th scope="col">Breaker</th><th scope="col" class="n">Not called</th></tr></thead>
<tbody>${v.platforms.map(platformRow)}</tbody></table>`
      : html`<p class="empty">No platform has an Entitlement API configured.</p>`
  }</div>`;
}

function platformRow(p: PlatformRow): Html {
  const breaker =
    p.breaker === 'closed' ? html`<span class="good">closed</span>` : html`<span class="bad">${p.breaker}</span>`;
  return html`<tr><td>${p.name}</td><td class="n">${count(p.calls)}</td><td class="n">${rate(p.errorRate)}</td><td class="n">${rate(p.timeoutRate)}</td>
<td class="n">${p.p50Ms !== undefined ? ms(p.p50Ms) : ''}</td><td class="n">${p.p95Ms !== undefined ? ms(p.p95Ms) : ''}</td><td>${breaker}</td><td class="n">${count(p.notCalled)}</td></tr>`;
}

function countsTable(e: FileEntry): Html {
  const c = e.counts!;
  const rows: [string, number | undefined][] = [
    ['Records (non-blank lines)', c.records],
    ['Added', c.added],
    ['Updated', c.updated],
    ['Removed', c.removed],
    ['Unchanged', c.unchanged],
    ['Removals of holdings not held', c.noopRemovals],
    ['Superseded by a later line', c.superseded],
    ['Overtaken by a later file', c.overtaken],
    ['Rejected', c.rejected],
  ];
  return html`<h2 id="counts">Counts</h2>
<div class="box" role="region" tabindex="0" aria-labelledby="counts"><table aria-labelledby="counts"><tbody>${rows
    .filter(([, n]) => n !== undefined)
    .map(
      ([label, n]) => html`<tr><th scope="row">${label}</th><td class="n">${count(n!)}</td></tr>`,
    )}</tbody></table></div>`;
}

function outcome(e: FileEntry): Html {
  return e.outcome === 'applied' ? html`<span class="good">applied</span>` : html`<span class="bad">quarantined</span>`;
}

function fileLink(env: EnvName, key: string): Html {
  const path = filePath(env, key);
  return path ? html`<a href="${path}"><code>${key}</code></a>` : html`<code>${key}</code>`;
}

/** The command that retries a quarantined file on this machine, as the operator would paste it. */
export function retryCommand(command: string, env: EnvName, key: string): string {
  return `${command} --retry${env === 'production' ? '' : ` --env ${env}`} ${shellWord(key)}`;
}

/** `word` as one shell word: as it is when it holds nothing the shell reads, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9._/:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const count = (n: number) => n.toLocaleString('en-US');
const rate = (r: number | undefined) => (r === undefined ? '' : `${(r * 100).toFixed(r > 0 && r < 0.001 ? 2 : 1)}%`);
const ms = (n: number) =>
  n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : n >= 100 ? `${Math.round(n)} ms` : `${n.toFixed(1)} ms`;
const iso = (t: number) => new Date(t).toISOString();
const when = (t: number) => (Number.isFinite(t) ? `${iso(t).slice(0, 10)} ${iso(t).slice(11, 16)} UTC` : 'unknown');

/** A span of time as a person reads it: `45 s`, `12 min`, `3 h 5 min`, `4 d 2 h`. */
function duration(spanMs: number): string {
  const s = Math.max(0, Math.round(spanMs / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
