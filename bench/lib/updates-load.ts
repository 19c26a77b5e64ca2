import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecords } from '../../src/updates/index.ts';
import { SAMPLE_PATH } from '../../test/support/rw-sample.ts';
import { prng } from './deposit-generator.ts';
import { sh } from './shell.ts';

/**
 * Updates API load as bench/updates-api.ts makes it (wrk with a Lua script cycling through prepared bodies, the
 * x-api-key header), for the benchmarks that load the daemon while doing something else. A load may run until
 * stopped: wrk prints its summary on SIGINT.
 */

export interface Load {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** DOIs of holdings (every line of the given deposit files) and DOIs with updates (the Retraction Watch sample). */
export async function doiPools(bucket: string, keys: string[]): Promise<{ plain: string[]; withUpdates: string[] }> {
  const plain: string[] = [];
  for (const key of keys)
    for (const line of new TextDecoder().decode(Bun.gunzipSync(readFileSync(join(bucket, key)))).split('\n'))
      if (line) plain.push((JSON.parse(line) as { doi: string }).doi);
  const withUpdates: string[] = [];
  let col = -1;
  for await (const { fields } of csvRecords(Bun.file(SAMPLE_PATH).stream())) {
    if (col < 0) col = fields.indexOf('OriginalPaperDOI');
    else if (fields[col]?.startsWith('10.')) withUpdates.push(fields[col]!);
  }
  return { plain, withUpdates };
}

/** `count` bodies of `n` DOIs, ~5% of them with updates (seeded). */
export function bodies(
  n: number,
  count: number,
  pools: { plain: string[]; withUpdates: string[] },
  seed = n,
): string[] {
  const rand = prng(seed);
  const pick = (a: string[]) => a[Math.floor(rand() * a.length)]!;
  return Array.from({ length: count }, () =>
    JSON.stringify({
      dois: Array.from({ length: n }, () => (rand() < 0.05 ? pick(pools.withUpdates) : pick(pools.plain))),
    }),
  );
}

export function wrkScript(path: string, list: string[], apiKey: string): string {
  const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  writeFileSync(
    path,
    `local bodies = {${list.map(luaString).join(',\n')}}
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["x-api-key"] = "${apiKey}"
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  return path;
}

function parse(out: string): Load {
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no result: ${out}`);
  const [requests, durationUs, p50, p99, statusErrors, socketErrors] = m.slice(1).map(Number) as number[];
  return {
    requests: requests!,
    rps: requests! / (durationUs! / 1e6),
    p50Ms: p50! / 1000,
    p99Ms: p99! / 1000,
    errors: statusErrors! + socketErrors!,
  };
}

/** wrk for a fixed duration. */
export async function wrk(url: string, script: string, duration: string, connections = 50): Promise<Load> {
  return parse((await sh(['wrk', '-t2', `-c${connections}`, `-d${duration}`, '-s', script, url])).out);
}

const loads = new Set<ReturnType<typeof Bun.spawn>>();

/** wrk running until stop() (SIGINT: wrk stops and prints its summary), at most 10 minutes. */
export function startWrk(url: string, script: string, connections = 50): { stop(): Promise<Load> } {
  const proc = Bun.spawn(['wrk', '-t2', `-c${connections}`, '-d600s', '-s', script, url], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  loads.add(proc);
  const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]).then(([o, e]) => o + e);
  return {
    async stop() {
      proc.kill('SIGINT');
      await proc.exited;
      loads.delete(proc);
      return parse(await out);
    },
  };
}

/** Ends every wrk started by startWrk and still running (in a finally). */
export async function stopLoads(): Promise<void> {
  for (const p of [...loads]) {
    p.kill('SIGKILL');
    await p.exited;
    loads.delete(p);
  }
}

/** The daemon's count of answered requests on `route` with `status` (from /metrics). */
export async function answered(url: string, route: string, status = 200): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(
    `^doi_holdings_http_requests_total\\{[^}]*route="${route.replace(/[./]/g, '\\$&')}"[^}]*status="${status}"[^}]*\\} (\\d+)`,
    'm',
  ).exec(text);
  return m ? Number(m[1]) : 0;
}
