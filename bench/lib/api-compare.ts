import { prng } from './deposit-generator.ts';
import { doiOf } from './scale-records.ts';
import { type Load, wrk } from './updates-load.ts';

/**
 * The scale benchmark's API loads: bodies of random held DOIs, each body checked against every server before a
 * load, and wrk runs on several servers taken in turns (this machine's speed drifts by 10-20% over tens of
 * seconds; turns spread the drift over all alike), the median run by req/s kept, as bench/updates-api.ts does.
 */

/** `count` bodies of `size` distinct DOIs of records below `records` (every one held), with `extra` members. */
export function heldBodies(
  records: number,
  o: { count: number; size: number; seed: number; extra?: Record<string, unknown> },
): string[] {
  const rand = prng(o.seed);
  return Array.from({ length: o.count }, () => {
    const picked = new Set<number>();
    while (picked.size < Math.min(o.size, records)) picked.add(Math.floor(rand() * records));
    return JSON.stringify({ ...o.extra, dois: [...picked].map(doiOf) });
  });
}

/**
 * POSTs `body` to `url` with the key; every entry of the answer's `list` member must have statusCode 200 (held and
 * answered), else the load would measure something else. Returns the reply's bytes (for a same-size ceiling).
 */
export async function checkedAnswer(
  url: string,
  apiKey: string,
  body: string,
  list: 'documents' | 'entitlements',
): Promise<Uint8Array> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  const entries = (JSON.parse(text) as Record<string, { statusCode: number }[]>)[list] ?? [];
  const sent = (JSON.parse(body) as { dois: string[] }).dois.length;
  const bad = entries.find((e) => e.statusCode !== 200);
  if (entries.length !== sent || bad)
    throw new Error(
      `${url}: ${sent} held DOIs asked, ${entries.length} entries answered${bad ? `, one of them ${JSON.stringify(bad)}` : ''}`,
    );
  return bytes;
}

export interface TurnsResult {
  /** every run's Load, per server name, in run order */
  runs: Record<string, Load[]>;
  /** the median run by req/s, with the errors of all runs */
  median: Record<string, Load>;
}

/**
 * A warm-up of `warmup` on each server, then `rounds` runs of `duration` on each, the servers taking turns. Each
 * server has its URL and its wrk script (its own bodies: DOIs that server holds).
 */
export async function inTurns(
  servers: Record<string, { url: string; script: string }>,
  o: { rounds: number; duration: string; warmup: string; connections: number },
): Promise<TurnsResult> {
  for (const { url, script } of Object.values(servers)) await wrk(url, script, o.warmup, o.connections);
  const runs: Record<string, Load[]> = Object.fromEntries(Object.keys(servers).map((name) => [name, []]));
  for (let round = 0; round < o.rounds; round++)
    for (const [name, { url, script }] of Object.entries(servers))
      runs[name]!.push(await wrk(url, script, o.duration, o.connections));
  const median = Object.fromEntries(
    Object.entries(runs).map(([name, loads]) => [
      name,
      {
        ...[...loads].sort((a, b) => a.rps - b.rps)[loads.length >> 1]!,
        errors: loads.reduce((n, l) => n + l.errors, 0),
      },
    ]),
  );
  return { runs, median };
}
