import { connect, type Socket } from 'node:net';

/** What came back on a raw connection: the first response (if any) and whether the server closed the connection. */
export interface RawAnswer {
  status: number | undefined;
  head: string;
  body: string;
  /** the server ended the connection (FIN or reset) before the client gave up */
  closed: boolean;
  /** ms from the first byte sent until the response's first byte (undefined: none came) */
  answeredAfterMs: number | undefined;
  /** bytes of the request body the client managed to hand to the socket before the answer came */
  written: number;
}

/**
 * Sends `head`, then `body` chunks as fast as the socket takes them or one per `paceMs` (stopping once an answer
 * arrives, unless `ignoreAnswer`: then it sends all, as some clients do), then waits
 * for the server to close or `waitMs` to pass. No HTTP client in between: it sends what a hostile client sends.
 */
export function rawExchange(
  port: number,
  head: string,
  opts: { body?: Iterable<Uint8Array>; waitMs?: number; paceMs?: number; ignoreAnswer?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const sock: Socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let answeredAt: number | undefined;
    let written = 0;
    let done = false;
    const t0 = performance.now();
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const headText = end === -1 ? text : text.slice(0, end);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1];
      resolve({
        status: status === undefined ? undefined : Number(status),
        head: headText,
        body: end === -1 ? '' : unchunked(headText, data.subarray(end + 4)).toString('utf8'),
        closed,
        answeredAfterMs: answeredAt === undefined ? undefined : answeredAt - t0,
        written,
      });
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 10_000);
    sock.on('data', (c: Buffer) => {
      answeredAt ??= performance.now();
      data = Buffer.concat([data, c]);
    });
    // 'close' comes after 'end' and after 'error' (a reset while writing): the data that arrived is all read by then
    sock.on('close', () => finish(true));
    sock.on('error', () => {});
    sock.on('connect', async () => {
      sock.write(head);
      if (!opts.body) return;
      for (const chunk of opts.body) {
        if ((answeredAt !== undefined && !opts.ignoreAnswer) || done) return;
        const drained = sock.write(chunk);
        written += chunk.length;
        if (!drained)
          await new Promise<void>((r) => {
            sock.once('drain', r);
            sock.once('close', r);
          });
        if (opts.paceMs) await Bun.sleep(opts.paceMs);
      }
    });
  });
}

/** The body as sent, or, for a chunked reply, its chunks' data joined (as far as it arrived). */
function unchunked(head: string, body: Buffer): Buffer {
  if (!/\r\ntransfer-encoding: chunked/i.test(head)) return body;
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const n = eol === -1 ? 0 : parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!n) return Buffer.concat(out);
    out.push(body.subarray(eol + 2, eol + 2 + n));
    at = eol + 2 + n + 2;
  }
}

/** Opens `n` TCP connections that send nothing; `close()` ends them all. */
export async function idleConnections(port: number, n: number): Promise<{ open(): number; close(): void }> {
  const socks: Socket[] = [];
  let open = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => {
            open++;
            resolve();
          });
          s.on('error', reject);
          s.on('close', () => open--);
          socks.push(s);
        }),
    ),
  );
  return { open: () => open, close: () => socks.forEach((s) => s.destroy()) };
}
