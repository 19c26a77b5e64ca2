/** The Updates API benchmark's ceiling: a bare Bun server that parses the JSON body and returns a fixed reply. */
const reply = JSON.stringify({ documents: [{ doi: '10.1234/x', statusCode: 200, updates: [] }] });
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    await req.json();
    return new Response(reply, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  },
});
console.log(`http://127.0.0.1:${server.port}`);
