import { join } from 'node:path';
import { writeDeposit } from '../../test/support/fixtures.ts';
import { writeDaemonConfig } from './daemon-config.ts';
import { REPO } from './ingest-data.ts';
import { lookupDoi, lookupEntry } from './lookup-works.ts';
import { indexesRead, type Started, startProcess } from './processes.ts';

/**
 * Scenario (f) of bench/entitlements.ts, entries by metadata (issue 51): a daemon of its own whose
 * `[entitlements.lookup]` is a loopback Crossref (bench/lib/crossref-lookup-server.ts, its own process) answering
 * every call in `delayMs`; one request of `n` metadata entries, each resolving to a DOI the daemon holds open,
 * timed whole; then the same request again, with Crossref's calls counted on its side before and after (the
 * repeat is answered from the lookup cache). Every answer is checked to be the resolved DOI, 200, with its uid.
 */

export interface LookupFigures {
  entries: number;
  delayMs: number;
  timeoutMs: number;
  concurrency: number;
  /** the first request, sent to answered, in ms */
  firstMs: number;
  /** the first request's entries resolved, and those answered as a lookup time-out (504) */
  resolved: number;
  timedOut: number;
  /** calls Crossref answered for the first request, and for the repeat */
  firstCalls: number;
  repeatCalls: number;
  repeatMs: number;
}

const KEY = 'bench-lookup-key-0123456789';
const listening = (out: string) => /^(http:\S+)$/m.exec(out)?.[1];

export async function lookupScenario(work: string, o: { n?: number; delayMs?: number } = {}): Promise<LookupFigures> {
  const n = o.n ?? 100;
  const delayMs = o.delayMs ?? 50;
  // the daemon's defaults: the figure is about what an operator gets without tuning
  const timeoutMs = 1000;
  const concurrency = 16;
  const crossref = await startProcess(
    [process.execPath, join(REPO, 'bench/lib/crossref-lookup-server.ts'), String(n), String(delayMs)],
    listening,
  );
  const bucket = join(work, 'lookup-bucket');
  writeDeposit(
    bucket,
    'acme',
    Array.from({ length: n }, (_, i) => ({ doi: lookupDoi(i), accessType: 'open' })),
  );
  const config = join(work, 'lookup.toml');
  writeDaemonConfig(config, {
    mapSizeGiB: 1,
    bucket,
    platforms: [{ name: 'acme' }],
    apiKey: KEY,
    updates: false,
    extra: `[entitlements.lookup]\nurl = "${crossref.url}"\nmailto = "bench@example.org"\n`,
  });
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
  );
  try {
    for (;;) {
      const h = (await (await fetch(`${daemon.url}/healthz`)).json()) as { production: { filesApplied: number } };
      if (h.production.filesApplied >= 1) break;
      await Bun.sleep(100);
    }
    await indexesRead(daemon);
    const body = JSON.stringify({ dois: Array.from({ length: n }, (_, i) => lookupEntry(i)) });
    const ask = async () => {
      const t0 = performance.now();
      const r = await fetch(`${daemon.url}/v2.2/entitlements`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body,
      });
      const text = await r.text();
      const ms = performance.now() - t0;
      return { ms, text, ...check(r.status, text, n) };
    };
    const before = await callsOf(crossref);
    const first = await ask();
    const between = await callsOf(crossref);
    const repeat = await ask();
    const after = await callsOf(crossref);
    // the repeat is served from the cache, so only what the first resolved can be the same
    if (first.timedOut === 0 && repeat.text !== first.text)
      throw new Error('(f): the repeated request was answered otherwise');
    return {
      entries: n,
      delayMs,
      timeoutMs,
      concurrency,
      firstMs: first.ms,
      resolved: first.resolved,
      timedOut: first.timedOut,
      firstCalls: between - before,
      repeatCalls: after - between,
      repeatMs: repeat.ms,
    };
  } finally {
    await daemon.stop();
    await crossref.stop();
  }
}

/**
 * Each entry answered as the DOI it names, from the deposit, with its uid, or as a lookup that did not finish in
 * time (504, doi "unknown": counted, the figure to print); anything else means the scenario measures nothing.
 */
function check(status: number, text: string, n: number): { resolved: number; timedOut: number } {
  const answers = status === 200 ? (JSON.parse(text) as { entitlements: Record<string, unknown>[] }).entitlements : [];
  let resolved = 0;
  let timedOut = 0;
  answers.forEach((a, i) => {
    if (a.uid !== `entry-${i}`) return;
    if (a.doi === lookupDoi(i) && a.statusCode === 200 && a.source === 'oa_platform') resolved++;
    else if (a.doi === 'unknown' && a.statusCode === 504) timedOut++;
  });
  if (status !== 200 || answers.length !== n || resolved + timedOut !== n)
    throw new Error(`(f): an entry was answered otherwise than resolved or timed out (status ${status}): ${text}`);
  return { resolved, timedOut };
}

/** The calls the fake Crossref has answered, as it counts them (it prints `calls <n>` on SIGUSR1). */
async function callsOf(crossref: Started): Promise<number> {
  const seen = crossref.output().match(/^calls \d+$/gm)?.length ?? 0;
  crossref.signal('SIGUSR1');
  for (;;) {
    const lines = crossref.output().match(/^calls \d+$/gm) ?? [];
    if (lines.length > seen) return Number(lines[lines.length - 1]!.slice(6));
    await Bun.sleep(10);
  }
}
