import { expect } from 'bun:test';
import type { CrossrefApi, FakeWork } from './crossref-api.ts';
import { type startDaemon, type TestConfig, waitForLog, writeConfig } from './fixtures.ts';

/**
 * Shared by the Crossref harvest tests (test/cli/harvest.test.ts, test/daemon/harvest.test.ts): a config with one
 * `[[updates.crossref]]` harvest pointing at the fake API, a daemon's base URL, and the public surfaces read
 * whole (the Updates API for every DOI, /metrics as a map).
 */

export const MAILTO = 'ops@example.org';
/** The retracted Lancet article of the real fixtures, and its retraction notice. */
export const RETRACTED_DOI = '10.1016/s0140-6736(20)31180-6';
export const NOTICE_DOI = '10.1016/s0140-6736(20)31324-6';

export type Daemon = ReturnType<typeof startDaemon>;

/** A config in `dir` whose one harvest (named "crossref") reads `api`; `extra` lines go into the harvest's table. */
export function harvestConfig(dir: string, api: { url: string }, extra = ''): TestConfig {
  return writeConfig(dir, `\n[[updates.crossref]]\nurl = "${api.url}"\nmailto = "${MAILTO}"\nrows = 100\n${extra}\n`);
}

/** The same store, with no harvest configured: a daemon that serves what was harvested and harvests nothing itself. */
export function servingConfig(dir: string): TestConfig {
  return writeConfig(dir, '');
}

/** The parsed JSON log lines of a daemon (stderr, one object per line). */
export function logLines(d: { log(): string }): Record<string, unknown>[] {
  // a line still being read has no newline yet: only whole lines are parsed
  const log = d.log();
  return log
    .slice(0, log.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The daemon listens on 127.0.0.1:0; its real address is in the `daemon.started` line. */
export async function daemonUrl(d: Daemon): Promise<string> {
  await waitForLog(d, '"daemon.started"');
  const url = logLines(d).find((l) => l.event === 'daemon.started')?.url;
  if (typeof url !== 'string') throw new Error(`no url in daemon.started: ${d.log()}`);
  return url.replace(/\/$/, '');
}

/** Every DOI's updates as the Updates API answers them (100 DOIs a request), keyed by DOI. */
export async function updatesOf(
  base: string,
  dois: readonly string[],
  path = '/v2.2/updates',
): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (let i = 0; i < dois.length; i += 100) {
    const chunk = dois.slice(i, i + 100);
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
      body: JSON.stringify({ dois: chunk }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const { documents } = JSON.parse(text) as {
      documents: { doi: string; statusCode: number; updates: Record<string, unknown>[] }[];
    };
    expect(documents.map((d) => [d.doi, d.statusCode])).toEqual(chunk.map((d) => [d, 200]));
    for (const d of documents) out[d.doi] = d.updates;
  }
  return out;
}

/** Every DOI a set of fake works names: the works and the DOIs their update entries point at. */
export function doisOf(works: readonly FakeWork[]): string[] {
  const dois = new Set<string>();
  for (const w of works) {
    dois.add(w.DOI.toLowerCase());
    for (const field of ['update-to', 'updated-by'] as const)
      for (const e of (w[field] as { DOI?: string }[] | undefined) ?? [])
        if (typeof e.DOI === 'string') dois.add(e.DOI.toLowerCase());
  }
  return [...dois].sort();
}

/** /metrics as `name{labels}` -> value. */
export async function metrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

export async function healthz(base: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${base}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The calls to /works of a fake, as decoded query parameters. */
export function queries(api: CrossrefApi): { filter: string; cursor: string; mailto: string | null }[] {
  return api.calls.map((c) => ({
    filter: c.params.get('filter') ?? '',
    cursor: c.params.get('cursor') ?? '',
    mailto: c.params.get('mailto'),
  }));
}

/**
 * From the `n`th call to /works on (1-based), that call and no other is held for `ms` before it is answered: the
 * fault is queued the moment the call arrives, before the fake looks for faults, so which call stalls does not
 * depend on how fast the harvest runs.
 */
export function stallCall(api: CrossrefApi, n: number, ms: number): void {
  const calls = api.calls;
  const push = calls.push.bind(calls);
  calls.push = (...items) => {
    const length = push(...items);
    if (length === n) api.inject({ kind: 'stall', ms, times: 1 });
    return length;
  };
}
