/**
 * The Entitlement benchmark's ceilings for paid DOIs ((c)): a bare Bun server that does the least any server must
 * do for a body of paid DOIs. It parses the body, asks the loopback platform about them (one POST per `batch`
 * DOIs, all in flight at once, a Bearer header, the answer read and `JSON.parse`d), then returns a fixed reply:
 * the daemon's real answer to such a body, saved. It has no index, JWT, breaker, cache, checks or rendering, so
 * it shows what the machine allows for this load; the daemon's figure is read against it.
 *
 * Two ways to make the calls:
 * - `fetch` (the default): Bun's fetch, as the daemon calls platforms. Bun's fetch does its socket work on a
 *   thread of its own, which shares the 2 cores with everything else.
 * - `socket`: a bare HTTP/1.1 client over Bun.connect, kept-alive connections, each call written in one piece and
 *   its answer read by its content-length. Only good for this platform (no TLS, no chunked answers, no time-outs,
 *   no redirects or errors handled), so no server could call real platforms this way; it shows how much of the
 *   machine fetch itself takes.
 *
 * Run as its own process: `bun bench/lib/paid-ceiling-server.ts <platform URL> <reply file> [batch] [fetch|socket]`
 * prints its URL.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'bun';

const [platformUrl, replyFile, batchArg, clientArg] = process.argv.slice(2);
if (!platformUrl || !replyFile)
  throw new Error('usage: paid-ceiling-server.ts <platform URL> <reply file> [batch] [fetch|socket]');
const reply = readFileSync(replyFile);
const batch = Number(batchArg ?? 20);
const headers = { 'content-type': 'application/json; charset=utf-8' };
const callHeaders = { 'content-type': 'application/json', authorization: 'Bearer ceiling' };

const viaFetch = (body: string) =>
  fetch(platformUrl, { method: 'POST', headers: callHeaders, body }).then((r) => r.text());

/** One kept-alive connection to the platform, with the answer it is reading (at most one call at a time). */
interface Connection {
  socket: Socket<Connection>;
  read: Buffer;
  answer: ((text: string) => void) | undefined;
  fail: ((e: Error) => void) | undefined;
}

const target = new URL(platformUrl);
const idle: Connection[] = [];
const callHead = `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\nauthorization: Bearer ceiling\r\n`;

/** The answer's body once all of it has come: its head ends the first blank line and states content-length. */
function answered(c: Connection): void {
  const end = c.read.indexOf('\r\n\r\n');
  if (end < 0) return;
  const length = /\r\ncontent-length: *(\d+)/i.exec(c.read.toString('latin1', 0, end))?.[1];
  // this client reads no other answer (and no bytes nobody asked for): the call fails, the connection goes
  if (length === undefined || !c.answer) return broken(c, 'an answer without a content-length, or bytes not asked for');
  const from = end + 4;
  if (c.read.length < from + Number(length)) return;
  const text = c.read.toString('utf8', from, from + Number(length));
  const answer = c.answer;
  c.read = Buffer.alloc(0);
  c.answer = undefined;
  c.fail = undefined;
  idle.push(c);
  answer(text);
}

/** The connection is of no more use: out of the pool, closed, its call (if any) failed with `why`. */
function broken(c: Connection, why: string): void {
  const at = idle.indexOf(c);
  if (at >= 0) idle.splice(at, 1);
  const fail = c.fail;
  c.answer = c.fail = undefined;
  fail?.(new Error(`the loopback platform: ${why}`));
  c.socket.end();
}

async function connection(): Promise<Connection> {
  const kept = idle.pop();
  if (kept) return kept;
  const c = { read: Buffer.alloc(0), answer: undefined, fail: undefined } as unknown as Connection;
  c.socket = await Bun.connect<Connection>({
    hostname: target.hostname,
    port: Number(target.port),
    data: c,
    socket: {
      data(s, chunk) {
        s.data.read = s.data.read.length ? Buffer.concat([s.data.read, chunk]) : Buffer.from(chunk);
        answered(s.data);
      },
      // gone from the pool; a call it was reading fails (wrk counts the request's 500)
      close(s) {
        broken(s.data, 'it closed the connection');
      },
    },
  });
  return c;
}

async function viaSocket(body: string): Promise<string> {
  const c = await connection();
  return new Promise((resolve, reject) => {
    c.answer = resolve;
    c.fail = reject;
    const text = `${callHead}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // a call is about 1 KB: written whole on loopback, or it fails rather than leave the platform waiting for the rest
    if (c.socket.write(text) !== Buffer.byteLength(text)) broken(c, 'a call was not written whole');
  });
}

const call = clientArg === 'socket' ? viaSocket : viaFetch;

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const { org, dois } = (await req.json()) as { org?: unknown; dois: string[] };
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < dois.length; i += batch)
      calls.push(call(JSON.stringify({ org, dois: dois.slice(i, i + batch) })).then((text) => JSON.parse(text)));
    await Promise.all(calls);
    return new Response(reply, { headers });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
