/**
 * The Entitlement benchmark's ceiling for paid DOIs ((c)): a bare Bun server that does the least any server must do
 * for a body of paid DOIs. It parses the body, asks the loopback platform about them with `fetch` (one POST per
 * `batch` DOIs, all in flight at once, a Bearer header, the answer read and `JSON.parse`d), then returns a fixed
 * reply: the daemon's real answer to such a body, saved. It has no index, JWT, breaker, cache, checks or
 * rendering, so it shows what the machine allows for this load; the daemon's figure is read against it.
 *
 * Run as its own process: `bun bench/lib/paid-ceiling-server.ts <platform URL> <reply file> <batch>` prints its URL.
 */
import { readFileSync } from 'node:fs';

const [platformUrl, replyFile, batchArg] = process.argv.slice(2);
if (!platformUrl || !replyFile) throw new Error('usage: paid-ceiling-server.ts <platform URL> <reply file> [batch]');
const reply = readFileSync(replyFile);
const batch = Number(batchArg ?? 20);
const headers = { 'content-type': 'application/json; charset=utf-8' };
const callHeaders = { 'content-type': 'application/json', authorization: 'Bearer ceiling' };

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const { org, dois } = (await req.json()) as { org?: unknown; dois: string[] };
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < dois.length; i += batch) {
      const body = JSON.stringify({ org, dois: dois.slice(i, i + batch) });
      calls.push(fetch(platformUrl, { method: 'POST', headers: callHeaders, body }).then(async (r) => JSON.parse(await r.text())));
    }
    await Promise.all(calls);
    return new Response(reply, { headers });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
