import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { startDaemon, tempDir, waitFor, writeConfig, writeDeposit } from '../support/fixtures.ts';
import { idleConnections, type RawAnswer, rawExchange } from './raw-http.ts';

/**
 * Hostile HTTP against the real daemon process (docs/reliability.md, "Hostile HTTP"): each attack gets its
 * documented status, and a witness asking for an open DOI meanwhile is answered 200 every time.
 */

const KEY = 'test-key-123';
const BODY_TIMEOUT_MS = 1500;
const OPEN_DOI = '10.5555/open.1';
const XSS_DOI = '10.5555/x"><script>alert(1)</script>';
const APIS = ['/v2.2/updates', '/v2.2/entitlements'] as const;

let dir: ReturnType<typeof tempDir>;
let daemon: ReturnType<typeof startDaemon>;
let base: string;
let port: number;

beforeAll(async () => {
  dir = tempDir();
  const cfg = writeConfig(dir.path);
  const text = readFileSync(cfg.path, 'utf8').replace(
    'listen = "127.0.0.1:0"',
    `listen = "127.0.0.1:0"\nbodyTimeoutMs = ${BODY_TIMEOUT_MS}`,
  );
  await Bun.write(cfg.path, text);
  writeDeposit(cfg.bucket, 'acme', [
    {
      doi: OPEN_DOI,
      accessType: 'open',
      vor: [{ url: 'https://acme.example/open.1.pdf', contentType: 'application/pdf' }],
    },
    { doi: XSS_DOI, accessType: 'paid' },
  ]);
  daemon = startDaemon(cfg.path);
  base = await waitFor(
    () => /"event":"daemon\.started".*?"url":"([^"]+)"/.exec(daemon.log())?.[1],
    'the daemon to listen',
    30_000,
  );
  port = Number(new URL(base).port);
  await waitFor(async () => (await witness()) === 200, 'the deposit to answer', 30_000);
});

afterAll(async () => {
  await daemon?.stop();
  dir?.remove();
});

/** One request a well-behaved integrator makes: 200 with `yes` from the deposit, else the status (or -1). */
async function witness(): Promise<number> {
  const r = await fetch(`${base}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ dois: [OPEN_DOI] }),
  });
  const body = (await r.json()) as { entitlements?: { entitled?: string }[] };
  return r.status === 200 && body.entitlements?.[0]?.entitled !== 'yes' ? -1 : r.status;
}

/** Runs the attack while the witness asks again and again; the witness's statuses come back with its result. */
async function duringAttack<T>(attack: () => Promise<T>): Promise<{ result: T; witnessed: number[] }> {
  const witnessed: number[] = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      witnessed.push(await witness().catch(() => 0));
      await Bun.sleep(20);
    }
  })();
  try {
    return { result: await attack(), witnessed };
  } finally {
    stop = true;
    await loop;
  }
}

function expectWitnessServed(witnessed: number[]): void {
  expect(witnessed.length).toBeGreaterThan(0);
  expect(witnessed.filter((s) => s !== 200)).toEqual([]);
}

async function post(
  path: string,
  body: string,
  contentType = 'application/json',
): Promise<{ status: number; error?: string; message?: string }> {
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': contentType },
    body,
  });
  const { error, message } = (await r.json()) as { error?: string; message?: string };
  return { status: r.status, error, message };
}

function head(path: string, extra: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\n${extra}\r\n`;
}

function* chunks(total: number, size = 64 * 1024): Generator<Uint8Array> {
  const chunk = new Uint8Array(size).fill(0x20);
  for (let sent = 0; sent < total; sent += size) yield chunk.subarray(0, Math.min(size, total - sent));
}

function errorOf(a: RawAnswer): string | undefined {
  return (JSON.parse(a.body) as { error?: string }).error;
}

describe.each(APIS)('%s: bodies that are not requests', (path) => {
  test('malformed JSON: 400 INVALID_JSON, saying where', async () => {
    const r = await post(path, '{"dois": ["10.5555/a",');
    expect([r.status, r.error]).toEqual([400, 'INVALID_JSON']);
    expect(r.message).toStartWith('the body is not valid JSON: ');
  });

  test('a wrong or missing content type: 415 before the body is looked at', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'json']) {
      const r = await post(path, JSON.stringify({ dois: [OPEN_DOI] }), type);
      expect([type, r.status, r.error]).toEqual([type, 415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
    const body = JSON.stringify({ dois: [OPEN_DOI] });
    const none = await rawExchange(
      port,
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY}\r\ncontent-length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect([none.status, errorOf(none)]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  test('101 DOIs: 400 naming the bound', async () => {
    const r = await post(path, JSON.stringify({ dois: Array.from({ length: 101 }, (_, i) => `10.5555/d${i}`) }));
    expect(r).toEqual({
      status: 400,
      error: 'BAD_REQUEST',
      message: '/dois: 101 DOIs given; send 1 to 100 per request',
    });
    expect(await witness()).toBe(200);
  });

  test('non-string DOIs, missing and unknown keys: 400 naming the field', async () => {
    const cases: [string, string][] = [
      [`{"dois":[5]}`, '/dois/0: '],
      [`{"dois":["${OPEN_DOI}",null]}`, '/dois/1: '],
      [`{"dois":[["${OPEN_DOI}"]]}`, '/dois/0: '],
      [`{"dois":"${OPEN_DOI}"}`, '/dois: '],
      [`{}`, '/dois: '],
      [`{"dois":[]}`, '/dois: 0 DOIs given'],
      [`{"dois":["${OPEN_DOI}"],"extra":1}`, '/extra: unexpected property'],
      [`{"dois":["${OPEN_DOI}"],"__proto__":{"polluted":1}}`, '/__proto__: unexpected property'],
      [`{"dois":["${OPEN_DOI}"],"constructor":{"prototype":{"polluted":1}}}`, '/constructor: unexpected property'],
      [`["${OPEN_DOI}"]`, ''],
      [`"${OPEN_DOI}"`, ''],
      [`null`, ''],
    ];
    for (const [body, start] of cases) {
      const r = await post(path, body);
      expect([body, r.status, r.error]).toEqual([body, 400, 'BAD_REQUEST']);
      expect(r.message).toStartWith(start);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('a 10 MB body with its length declared: 413 at once, the rest not read, the connection closed', async () => {
    const total = 10 * 1024 * 1024;
    const { result: a, witnessed } = await duringAttack(() =>
      rawExchange(port, head(path, `content-length: ${total}\r\n`), { body: chunks(total), paceMs: 2 }),
    );
    expect([a.status, errorOf(a), a.closed]).toEqual([413, 'PAYLOAD_TOO_LARGE', true]);
    expect(a.written).toBeLessThan(total);
    expectWitnessServed(witnessed);
    // a client that sends all, as fast as it can, still reads the 413: the connection is not reset under it
    for (let i = 0; i < 5; i++) {
      const fast = await rawExchange(port, head(path, `content-length: ${total}\r\n`), {
        body: chunks(total),
        ignoreAnswer: true,
      });
      expect([fast.status, errorOf(fast)]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    }
  });

  test('a 10 MB chunked body: 413 once the bound is passed, the rest not read, the connection closed', async () => {
    const total = 10 * 1024 * 1024;
    const framed = function* () {
      for (const c of chunks(total))
        yield Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]);
      yield Buffer.from('0\r\n\r\n');
    };
    const { result: a, witnessed } = await duringAttack(() =>
      rawExchange(port, head(path, 'transfer-encoding: chunked\r\n'), { body: framed(), paceMs: 2 }),
    );
    expect([a.status, errorOf(a), a.closed]).toEqual([413, 'PAYLOAD_TOO_LARGE', true]);
    expect(a.written).toBeLessThan(total);
    expectWitnessServed(witnessed);
  });

  test('a body that stalls: 408 REQUEST_TIMEOUT after server.bodyTimeoutMs, and the connection closed', async () => {
    const partial = [Buffer.from('{"dois": ["10.5555/')];
    const { result: a, witnessed } = await duringAttack(() =>
      rawExchange(port, head(path, 'content-length: 100\r\n'), { body: partial, waitMs: 20_000 }),
    );
    expect([a.status, errorOf(a), a.closed]).toEqual([408, 'REQUEST_TIMEOUT', true]);
    // answered by the body time-out, not dropped by the server's 30 s idle time-out
    expect(a.answeredAfterMs!).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    expect(a.answeredAfterMs!).toBeLessThan(20_000);
    expect(JSON.parse(a.body).message).toBe(`the request body did not arrive whole within ${BODY_TIMEOUT_MS} ms`);
    expectWitnessServed(witnessed);
  });

  test('a chunked body that stalls: 408 too', async () => {
    const partial = [Buffer.from('5\r\n{"doi\r\n')];
    const a = await rawExchange(port, head(path, 'transfer-encoding: chunked\r\n'), { body: partial, waitMs: 20_000 });
    expect([a.status, errorOf(a), a.closed]).toEqual([408, 'REQUEST_TIMEOUT', true]);
  });
});

describe('connections and headers', () => {
  test('2,000 idle connections: every other client is still answered, and a request on one of them too', async () => {
    const idle = await idleConnections(port, 2000);
    try {
      expect(idle.open()).toBe(2000);
      const { witnessed } = await duringAttack(() => Bun.sleep(500));
      expectWitnessServed(witnessed);
      const a = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect(a.status).toBe(200);
    } finally {
      idle.close();
    }
  });

  test('64 KB of headers, in one header or in many: 431 and the connection closed', async () => {
    const one = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nx-big: ${'a'.repeat(64 * 1024)}\r\n\r\n`;
    const many = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 1024 }, (_, i) => `x-h${i}: ${'b'.repeat(58)}\r\n`).join('')}\r\n`;
    for (const request of [one, many]) {
      const { result: a, witnessed } = await duringAttack(() => rawExchange(port, request));
      expect([a.status, a.closed]).toEqual([431, true]);
      expectWitnessServed(witnessed);
    }
  });
});

describe('status pages: traversal and script in the DOI', () => {
  test('path traversal never leaves the route nor reads a file', async () => {
    const cases: [string, number][] = [
      ['/doi/../../etc/passwd', 404], // the path is normalised first: no such route
      ['/doi/..%2f..%2fetc%2fpasswd', 400], // not a DOI
      ['/doi/%2e%2e/%2e%2e/etc/passwd', 404],
      ['/doi/10.5555/..%2f..%2f..%2fetc%2fpasswd', 404], // a DOI no platform holds
      ['/doi/10.5555/../../../../etc/passwd', 404],
    ];
    for (const [target, status] of cases) {
      const a = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect([target, a.status]).toEqual([target, status]);
      expect(a.body).not.toContain('root:');
    }
  });

  test('a DOI carrying markup is shown as text: escaped in the page, under a CSP that forbids scripts', async () => {
    for (const [doi, status] of [
      [XSS_DOI, 200],
      ['10.5555/<img/src=x/onerror=alert(1)>', 404],
      ['10.5555/<img src=x onerror=alert(1)>', 400], // a space: not a DOI
      ['<script>alert(1)</script>', 400],
    ] as const) {
      const r = await fetch(`${base}/doi/${encodeURIComponent(doi)}`);
      const html = await r.text();
      expect([doi, r.status]).toEqual([doi, status]);
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('<img');
      expect(html).toContain('&lt;');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
  });
});
