/**
 * The tiny-reply ceiling for GET routes (bench/change-feed.ts): a bare Bun server that answers every request
 * with a fixed JSON reply and reads nothing of the request (bench/ceiling-server.ts parses a POST body, which a
 * GET has not). The reply is the file named by the first argument, else a tiny JSON object. Prints its URL.
 */
import { readFileSync } from 'node:fs';

const [replyFile] = process.argv.slice(2);
const reply = replyFile ? readFileSync(replyFile) : Buffer.from('{"changes":[],"next":"","more":false}');
const headers = { 'content-type': 'application/json; charset=utf-8' };
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response(reply, { headers }),
});
console.log(`http://127.0.0.1:${server.port}`);
