/**
 * The Updates API benchmark's ceiling: a bare Bun server that parses the JSON body and returns a fixed reply.
 * Without arguments the reply is tiny; with two files it returns the first for 1-DOI bodies and the second
 * otherwise, so the ceiling moves the same bytes over the socket as the daemon's typical answers.
 */
import { readFileSync } from 'node:fs';

const [oneFile, manyFile] = process.argv.slice(2);
const tiny = JSON.stringify({ documents: [{ doi: '10.1234/x', statusCode: 200, updates: [] }] });
const one = oneFile ? readFileSync(oneFile) : Buffer.from(tiny);
const many = manyFile ? readFileSync(manyFile) : Buffer.from(tiny);
const headers = { 'content-type': 'application/json; charset=utf-8' };
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { dois: unknown[] };
    return new Response(body.dois.length === 1 ? one : many, { headers });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
