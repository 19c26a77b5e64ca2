import type { EnvName } from '../config/index.ts';
import { type Html, HttpUrl, html, pageHead } from '../status-page/index.ts';
import { ACCESS_COLUMNS, type AccessCounts, conflictFault, type FileEntry } from '../store/index.ts';
import type { FileView, Overview, PlatformRow, SourceRow } from './console.ts';
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
  const waiting = v.ingest && html`; ${v.ingest.queueDepth} files waiting${lag(v.ingest.lagSeconds)}`;
  const body = html`<h1>${ENV_TITLES[v.env]}</h1>
<p class="meta">As of ${timeOf(v.now)}${waiting}.</p>
${holdingsSection(v)}
${daysSection(v)}
${latestSection(v)}
${quarantinedSection(v)}
${conflictsSection(v)}
${sourcesSection(v)}
${platformsSection(v)}`;
  return page(ENV_TITLES[v.env], v.env, v.envs, v.version, body);
}

export function renderFileView(r: FileView): string {
  const e = r.entry;
  const lines = e.rejectedLines ?? [];
  const t = e.timings;
  const body = html`<p class="meta"><a href="${consolePath(r.env)}">${ENV_TITLES[r.env]}</a> › file report</p>
<h1><code>${e.key}</code></h1>
<div class="box"><dl>
<dt>Outcome</dt><dd>${outcome(e)}</dd>
${e.code ? html`<dt>Reason</dt><dd><code>${e.code}</code>: ${e.message ?? ''}</dd>` : ''}
<dt>Platform</dt><dd>${e.platform ?? 'not known'}</dd>
${e.seq !== undefined ? html`<dt>Apply number</dt><dd>${e.seq}</dd>` : ''}
<dt>Last modified</dt><dd>${timeOf(e.lastModified)}</dd>
<dt>Recorded</dt><dd>${timeOf(Date.parse(e.recordedAt))}</dd>
<dt>Size</dt><dd>${count(e.size)} bytes</dd>
<dt>SHA-256</dt><dd><code>${e.hash || 'not read'}</code></dd>
${t ? html`<dt>Time</dt><dd>${ms(t.readMs)} read, ${ms(t.parseMs)} parse, ${ms(t.applyMs)} apply</dd>` : ''}
${e.tries !== undefined ? html`<dt>Tries</dt><dd>${e.tries}</dd>` : ''}
</dl></div>
${e.outcome === 'quarantined' ? html`<p>Retry it: <code>${retryCommand(r.command, r.env, e.key)}</code></p>` : ''}
${e.counts ? countsSection(e) : ''}
${section(
  'rejected',
  'Rejected lines',
  lines.length > 0
    ? table(
        'rejected',
        [num('Line'), 'Field', 'Reason'],
        lines.map((l) =>
          row([
            numCell(l.line),
            cell(html`<code>${l.path || '(the whole line)'}</code>`),
            cell(html`<code>${l.code}</code>: ${l.message}`),
          ]),
        ),
      )
    : none(),
)}
${e.rejectedNotListed ? html`<p>${count(e.rejectedNotListed)} more rejected lines were counted, not kept: <code>${r.command} --validate FILE</code> lists every one.</p>` : ''}
${
  r.conflicts.length > 0
    ? section(
        'conflicts',
        'Same-name conflicts',
        table(
          'conflicts',
          ['Recorded', num('Size'), 'Reason'],
          r.conflicts.map((c) =>
            row([cell(timeOf(Date.parse(c.recordedAt))), numCell(count(c.size)), cell(conflictFault(c).message)]),
          ),
        ),
      )
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
  const links = envs.map(
    (e) =>
      html`<li><a href="${consolePath(e)}"${e === env ? html` aria-current="page"` : ''}>${ENV_TITLES[e]}</a></li>`,
  );
  return html`<!doctype html>
<html lang="en">
${pageHead(`${title} · doi-holdings console`, CONSOLE_STYLE)}
<body>
<header class="site"><div><p>doi-holdings console</p>
<nav aria-label="Environments"><ul>${links}</ul></nav></div>
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
  const byAccess = v.holdings.byAccess;
  const caption = byAccess
    ? "Per platform and access type, from the store's counters."
    : html`Per platform, from the store's counters; per access type once the daemon counts them again at its next start (files an older program applied since), or now: <code>${v.command} --stats --env ${v.env}</code>`;
  const accessCells = (counts: AccessCounts | undefined) =>
    byAccess ? ACCESS_COLUMNS.map((a) => numCell(count(counts?.[a] ?? 0))) : [];
  return section(
    'holdings',
    'Live holdings',
    rows.length > 0
      ? table(
          'holdings',
          ['Platform', num('Holdings'), ...(byAccess ? ACCESS_COLUMNS.map(num) : [])],
          rows.map(([p, n]) => row([cell(p), numCell(count(n)), ...accessCells(byAccess?.byPlatform[p])])),
          {
            caption,
            wide: false,
            foot: html`<tr><th scope="row">All platforms</th>${numCell(count(v.holdings.total))}${accessCells(byAccess?.total)}</tr>`,
          },
        )
      : none('No holdings yet.'),
  );
}

function daysSection(v: Overview): Html {
  const total = v.days.reduce((n, d) => n + d.files, 0);
  const today = v.days.at(-1)?.files ?? 0;
  return section(
    'days',
    'Files applied per day',
    html`<figure>${dayChart(v.days)}
<figcaption>${count(total)} ${total === 1 ? 'file' : 'files'} applied over the last ${v.days.length} days (UTC), ${count(today)} today.</figcaption></figure>`,
  );
}

function latestSection(v: Overview): Html {
  const columns = ['File', 'Applied', 'Outcome', ...['Records', 'Added', 'Updated', 'Removed', 'Unchanged'].map(num)];
  const rows = v.latest.map((e) => {
    const c = e.counts;
    const t = e.timings;
    const counted = (n: number | undefined) => numCell(n === undefined ? '' : count(n));
    return row([
      fileCell(v.env, e.key),
      cell(timeOf(Date.parse(e.recordedAt))),
      cell(outcome(e)),
      counted(c?.records),
      counted(c?.added),
      counted(c?.updated),
      counted(c?.removed),
      counted(c?.unchanged),
      numCell(c?.rejected ? html`<span class="bad">${count(c.rejected)}</span>` : c ? '0' : ''),
      numCell(t ? ms(t.readMs + t.parseMs + t.applyMs) : ''),
    ]);
  });
  return section(
    'latest',
    'Latest files applied',
    rows.length > 0
      ? table('latest', [...columns, num('Rejected'), num('Time to apply')], rows)
      : none('No file applied yet.'),
  );
}

function quarantinedSection(v: Overview): Html {
  const all = v.failures.quarantined;
  const shown = all.slice(0, FAILURES_LISTED);
  const caption =
    all.length > shown.length &&
    html`The newest ${shown.length} of ${count(all.length)}: <code>${v.command} --failures --env ${v.env}</code> lists every one.`;
  const rows = shown.map((e) =>
    row([
      fileCell(v.env, e.key),
      cell(timeOf(Date.parse(e.recordedAt))),
      cell(html`<code>${e.code ?? ''}</code>: ${e.message ?? ''}`),
      cell(html`<code>${retryCommand(v.command, v.env, e.key)}</code>`),
    ]),
  );
  return section(
    'quarantined',
    'Quarantined files',
    rows.length > 0
      ? table('quarantined', ['File', 'Recorded', 'Reason', 'Retry it with'], rows, { caption: caption || undefined })
      : none(),
  );
}

function conflictsSection(v: Overview): Html {
  const all = v.failures.conflicts;
  const shown = all.slice(0, FAILURES_LISTED);
  const more = all.length > shown.length && html` The newest ${shown.length} of ${count(all.length)}.`;
  const caption = html`Content deposited again under a name already applied is never applied, so no command retries it: ask the platform to deposit it under a new file name.${more}`;
  const rows = shown.map((c) =>
    row([
      fileCell(v.env, c.key),
      cell(timeOf(Date.parse(c.recordedAt))),
      cell(conflictFault(c).message),
      cell(html`<code>${v.command} --report --env ${v.env} ${shellWord(c.key)}</code>`),
    ]),
  );
  return section(
    'conflicts',
    'Same-name conflicts',
    rows.length > 0 ? table('conflicts', ['File', 'Recorded', 'Reason', 'See it with'], rows, { caption }) : none(),
  );
}

function sourcesSection(v: Overview): Html {
  const columns = ['Source', 'State', 'Last success', num('Age'), num('Rows'), 'Next run', 'Last error'];
  return section(
    'sources',
    'Update sources',
    v.sources.length > 0
      ? table(
          'sources',
          columns,
          v.sources.map((s) => sourceRow(s, v.now)),
        )
      : none('No update source is followed by this daemon.'),
  );
}

function sourceRow(s: SourceRow, now: number): Html {
  const failed = s.lastFailureAt ? html` at ${timeOf(s.lastFailureAt)}` : '';
  return row([
    cell(html`<code>${s.label}</code>`),
    cell(s.stale ? html`<span class="warn">stale</span>` : html`<span class="good">ok</span>`),
    cell(s.lastSuccessAt ? timeOf(s.lastSuccessAt) : 'never'),
    numCell(s.lastSuccessAt ? duration(now - s.lastSuccessAt) : ''),
    numCell(s.rows !== undefined ? count(s.rows) : ''),
    cell(s.nextRunAt ? timeOf(s.nextRunAt) : 'when a file is dropped'),
    cell(s.lastError ? html`<code>${s.lastError}</code>${failed}` : ''),
  ]);
}

function platformsSection(v: Overview): Html {
  const index = v.index.complete
    ? html`<span class="good">complete</span>`
    : html`<span class="warn">warming</span> (lookups read the store meanwhile)`;
  const columns = [
    'Platform',
    ...['Calls', 'Errors', 'Time-outs', 'p50', 'p95'].map(num),
    'Breaker',
    num('Not called'),
  ];
  const caption =
    "Calls to each platform's Entitlement API since start, both environments; latency from the call histogram.";
  return html`<h2 id="platforms">Entitlement API</h2>
<p class="meta">Holdings index: ${index}, ${count(v.index.dois)} DOIs, ${v.index.builds} full reads of the store.</p>
${box(
  'platforms',
  v.platforms.length > 0
    ? table('platforms', columns, v.platforms.map(platformRow), { caption })
    : none('No platform has an Entitlement API configured.'),
)}`;
}

function platformRow(p: PlatformRow): Html {
  const latency = (v: number | undefined) => numCell(v !== undefined ? ms(v) : '');
  return row([
    cell(p.name),
    numCell(count(p.calls)),
    numCell(rate(p.errorRate)),
    numCell(rate(p.timeoutRate)),
    latency(p.p50Ms),
    latency(p.p95Ms),
    cell(p.breaker === 'closed' ? html`<span class="good">closed</span>` : html`<span class="bad">${p.breaker}</span>`),
    numCell(count(p.notCalled)),
  ]);
}

function countsSection(e: FileEntry): Html {
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
  const shown = rows.filter((r): r is [string, number] => r[1] !== undefined);
  return section(
    'counts',
    'Counts',
    html`<table aria-labelledby="counts"><tbody>${shown.map(([label, n]) => html`<tr><th scope="row">${label}</th>${numCell(count(n))}</tr>`)}</tbody></table>`,
  );
}

// --- the pieces every section is made of ---

/** A heading and its box. */
function section(id: string, title: string, inner: Html): Html {
  return html`<h2 id="${id}">${title}</h2>
${box(id, inner)}`;
}

function box(id: string, inner: Html): Html {
  return html`<div class="box" role="region" tabindex="0" aria-labelledby="${id}">${inner}</div>`;
}

/** A column of a table: its label, as a number column when made by `num` (right-aligned). */
type Column = string | { numeric: string };
const num = (label: string): Column => ({ numeric: label });

/** A table labelled by its section's heading; wide (it keeps its width and scrolls on a phone) unless told. */
function table(
  id: string,
  columns: readonly Column[],
  rows: readonly Html[],
  o: { caption?: Html | string; foot?: Html; wide?: boolean } = {},
): Html {
  const heads = columns.map((c) =>
    typeof c === 'string' ? html`<th scope="col">${c}</th>` : html`<th scope="col" class="n">${c.numeric}</th>`,
  );
  return html`<table${o.wide === false ? '' : html` class="wide"`} aria-labelledby="${id}">${o.caption ? html`<caption>${o.caption}</caption>` : ''}
<thead><tr>${heads}</tr></thead>
<tbody>${rows}</tbody>${
    o.foot
      ? html`
<tfoot>${o.foot}</tfoot>`
      : ''
  }</table>`;
}

const row = (cells: readonly Html[]): Html => html`<tr>${cells}</tr>`;
const cell = (v: Html | string): Html => html`<td>${v}</td>`;
const numCell = (v: Html | string | number): Html => html`<td class="n">${v}</td>`;
const none = (text = 'None.'): Html => html`<p class="empty">${text}</p>`;

function fileCell(env: EnvName, key: string): Html {
  const path = filePath(env, key);
  return html`<td class="file">${path ? html`<a href="${path}"><code>${key}</code></a>` : html`<code>${key}</code>`}</td>`;
}

function outcome(e: FileEntry): Html {
  return e.outcome === 'applied' ? html`<span class="good">applied</span>` : html`<span class="bad">quarantined</span>`;
}

const timeOf = (t: number): Html | string =>
  Number.isFinite(t) ? html`<time datetime="${iso(t)}">${when(t)}</time>` : 'unknown';
const lag = (seconds: number) => (seconds > 0 ? html`, ${duration(seconds * 1000)} behind` : '');

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
const when = (t: number) => `${iso(t).slice(0, 10)} ${iso(t).slice(11, 16)} UTC`;

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
