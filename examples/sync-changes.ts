/**
 * Keeps a local copy of every work's updates in step with doi-holdings' change feed (README, "Change feed").
 *
 *   DOI_HOLDINGS_API_KEY=... bun examples/sync-changes.ts https://holdings.example.org [STATE_FILE]
 *
 * STATE_FILE (its folder made when missing) defaults to doi-holdings-examples/sync-state.json in the system's
 * temporary folder ($TMPDIR, else /tmp): give one that lasts for a real client. It holds the cursor and the works:
 * {"cursor": "...", "works": {"<doi>": [updates...]}}. Each item is the work's complete list, so applying it twice
 * is harmless; `updates: []` removes the work. A 410 means the cursor cannot be continued: start again from the
 * beginning. Run it from cron, or in a loop with a pause. Prints {"changed", "works", "cursor", "state"}.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

interface State {
  cursor?: string;
  works: Record<string, unknown[]>;
}

const [base, file = join(tmpdir(), 'doi-holdings-examples', 'sync-state.json')] = process.argv.slice(2);
const key = process.env.DOI_HOLDINGS_API_KEY;
if (!base || !key) {
  console.error('usage: DOI_HOLDINGS_API_KEY=... bun examples/sync-changes.ts BASE_URL [STATE_FILE]');
  process.exit(2);
}
mkdirSync(dirname(file), { recursive: true });

let state: State = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { works: {} };
let changed = 0;
for (;;) {
  const query = state.cursor ? `?after=${encodeURIComponent(state.cursor)}` : '';
  const r = await fetch(`${base}/v2.2/updates/changes${query}`, { headers: { 'x-api-key': key } });
  if (r.status === 410) {
    console.error(
      `the cursor is gone (${((await r.json()) as { message: string }).message}); syncing again from the start`,
    );
    state = { works: {} };
    continue;
  }
  if (!r.ok) throw new Error(`changes: HTTP ${r.status} ${await r.text()}`);
  const page = (await r.json()) as { changes: { doi: string; updates: unknown[] }[]; next: string; more: boolean };
  for (const { doi, updates } of page.changes) {
    if (updates.length === 0) delete state.works[doi.toLowerCase()];
    else state.works[doi.toLowerCase()] = updates;
    changed++;
  }
  state.cursor = page.next;
  // saved after every page: a sync stopped half-way carries on from here
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
  if (!page.more) break;
}
console.log(JSON.stringify({ changed, works: Object.keys(state.works).length, cursor: state.cursor, state: file }));
