import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  CrossrefClient,
  parseInterval,
  parsePage,
  parseRetryAfter,
  RateGate,
} from '../../../src/updates/harvest/index.ts';

/** The small rules of the harvest's client (src/updates/harvest/crossref-client.ts, rate-gate.ts). */

describe('what a reply says', () => {
  test('x-rate-limit-interval in seconds (as Crossref sends it), ms, minutes; junk is ignored', () => {
    expect(parseInterval('1s')).toBe(1000);
    expect(parseInterval(' 2.5s ')).toBe(2500);
    expect(parseInterval('500ms')).toBe(500);
    expect(parseInterval('1m')).toBe(60_000);
    expect(parseInterval('3')).toBe(3000);
    expect(parseInterval('0s')).toBeUndefined();
    expect(parseInterval('soon')).toBeUndefined();
    expect(parseInterval(null)).toBeUndefined();
  });

  test('Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    expect(parseRetryAfter(inTen)).toBeGreaterThan(8000);
    expect(parseRetryAfter(inTen)).toBeLessThanOrEqual(10_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(0);
    expect(parseRetryAfter('later')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  test('a work-list page, or why it is not one', () => {
    const page = {
      status: 'ok',
      'message-type': 'work-list',
      message: { 'next-cursor': 'abc', 'total-results': 2, items: [{ DOI: '10.5555/a' }] },
    };
    expect(parsePage(JSON.stringify(page))).toEqual({
      items: [{ DOI: '10.5555/a' }],
      nextCursor: 'abc',
      totalResults: 2,
    });
    expect(parsePage(JSON.stringify(page).slice(0, 40))).toStartWith('the reply is not whole JSON');
    expect(parsePage('{"status":"ok","message":{}}')).toBe('the reply has no message.items list');
    expect(parsePage(JSON.stringify({ message: { items: [] } }))).toEqual({
      items: [],
      nextCursor: undefined,
      totalResults: -1,
    });
  });
});

describe('RateGate', () => {
  const headers = (limit: string, interval: string, concurrency: string) =>
    new Headers({ 'x-rate-limit-limit': limit, 'x-rate-limit-interval': interval, 'x-concurrency-limit': concurrency });

  test('until a reply tells it, one call at a time and no spacing; then the advertised figures, 5% to spare', () => {
    const gate = new RateGate();
    expect([gate.concurrency, gate.spacingMs()]).toEqual([1, 0]);
    gate.learn(headers('50', '1s', '3'));
    expect(gate.concurrency).toBe(3);
    expect(gate.spacingMs()).toBeCloseTo(21, 5);
    gate.learn(new Headers()); // a reply without the headers keeps what is known
    expect([gate.limit, gate.intervalMs, gate.concurrency]).toEqual([50, 1000, 3]);
  });

  test('no more calls in flight than the concurrency limit; a waiting call starts when one ends', async () => {
    const gate = new RateGate();
    gate.learn(headers('1000', '1s', '2'));
    const a = await gate.enter();
    const b = await gate.enter();
    let third = false;
    const c = gate.enter().then((release) => {
      third = true;
      return release;
    });
    await Bun.sleep(20);
    expect(third).toBe(false);
    a();
    a(); // releasing twice frees one slot only
    (await c)();
    expect(third).toBe(true);
    b();
  });

  test('limits learnt after a call started space the next call from that start', async () => {
    const gate = new RateGate();
    const first = performance.now();
    (await gate.enter())();
    gate.learn(headers('5', '1s', '1'));
    (await gate.enter())();
    expect(performance.now() - first).toBeGreaterThanOrEqual(200);
  });
});

describe('waits between tries (a real server on loopback answering 503)', () => {
  let server: ReturnType<typeof Bun.serve>;
  let retryAfter: string | undefined;
  let calls = 0;
  beforeAll(() => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        calls++;
        return new Response('{"status":"failed","message":[{"type":"overloaded"}]}', {
          status: 503,
          headers: retryAfter ? { 'retry-after': retryAfter } : {},
        });
      },
    });
  });
  afterAll(() => server.stop(true));

  /** The waits one page's tries asked for (the client's sleep only records them), and the calls the server saw. */
  async function waitsOf(o: {
    maxTries: number;
    retryBaseMs: number;
    maxWaitMs: number;
  }): Promise<{ waits: number[]; calls: number; code: string }> {
    const waits: number[] = [];
    const before = calls;
    const client = new CrossrefClient({
      baseUrl: `http://127.0.0.1:${server.port}`,
      mailto: 'ops@example.org',
      userAgent: 'test',
      ...o,
      sleep: async (ms) => void waits.push(ms),
    });
    const r = await client.works({ filter: 'from-index-date:2026-01-01', select: 'DOI', rows: 10, cursor: '*' });
    return { waits, calls: calls - before, code: 'code' in r ? (r.code as string) : 'page' };
  }

  test('each wait is drawn from the upper half of a doubling step, capped; every try reaches the server', async () => {
    retryAfter = undefined;
    const { waits, calls: made, code } = await waitsOf({ maxTries: 6, retryBaseMs: 1000, maxWaitMs: 4000 });
    expect(code).toBe('HARVEST_HTTP_ERROR');
    expect(made).toBe(6);
    // before tries 2..6: steps of 1, 2, 4, then the 4 s cap
    const steps = [1000, 2000, 4000, 4000, 4000];
    expect(waits).toHaveLength(steps.length);
    waits.forEach((w, k) => {
      expect(w).toBeGreaterThanOrEqual(steps[k]! / 2);
      expect(w).toBeLessThanOrEqual(steps[k]!);
    });
  });

  test('the waits are jittered: many clients retrying at once do not all wait alike', async () => {
    retryAfter = undefined;
    const first: number[] = [];
    for (let i = 0; i < 30; i++)
      first.push((await waitsOf({ maxTries: 2, retryBaseMs: 1000, maxWaitMs: 4000 })).waits[0]!);
    // uniform over [500, 1000]: all 30 above 650, or all below 850, has a chance of 0.7^30 (2e-5) each
    expect(Math.min(...first)).toBeLessThan(650);
    expect(Math.max(...first)).toBeGreaterThan(850);
    expect(new Set(first).size).toBeGreaterThan(20);
  });

  test('never shorter than the Retry-After the server asks for, and never past the cap for it', async () => {
    retryAfter = '3';
    const asked = await waitsOf({ maxTries: 3, retryBaseMs: 100, maxWaitMs: 60_000 });
    expect(asked.waits).toHaveLength(2);
    for (const w of asked.waits) expect(w).toBeGreaterThanOrEqual(3000);
    retryAfter = '3600';
    const capped = await waitsOf({ maxTries: 2, retryBaseMs: 100, maxWaitMs: 5000 });
    expect(capped.waits).toEqual([5000]);
    retryAfter = undefined;
  });
});

test('a stop while the call waits for the rate gate makes no call: its page would be cut off and lost', async () => {
  let calls = 0;
  const fetchCounting = (async () => {
    calls++;
    return new Response('{}', { status: 500 });
  }) as unknown as typeof fetch;
  const client = new CrossrefClient({
    baseUrl: 'http://127.0.0.1:9',
    mailto: 'ops@example.org',
    userAgent: 'test',
    fetch: fetchCounting,
  });
  // one call a second, and one just started: the next waits about a second at the gate
  client.gate.learn(new Headers({ 'x-rate-limit-limit': '1', 'x-rate-limit-interval': '1s' }));
  (await client.gate.enter())();
  const stop = new AbortController();
  const page = client.works({ filter: 'is-update:true', select: 'DOI', rows: 10, cursor: '*' }, stop.signal);
  await Bun.sleep(100);
  stop.abort();
  expect(await page).toMatchObject({ code: 'HARVEST_STOPPED' });
  expect(calls).toBe(0);
});

test('a stop that cuts off the last try is a stop, not a failure after all the tries', async () => {
  const stop = new AbortController();
  let calls = 0;
  const lastHangs = (async (_url: string, init: RequestInit) => {
    if (++calls < 3) return new Response('busy', { status: 503 });
    // the last try: held until the stop's grace cuts it off
    stop.abort();
    return new Promise<Response>((_, reject) =>
      init.signal?.addEventListener('abort', () =>
        reject(new DOMException('The operation was aborted.', 'AbortError')),
      ),
    );
  }) as unknown as typeof fetch;
  const client = new CrossrefClient({
    baseUrl: 'http://127.0.0.1:9',
    mailto: 'ops@example.org',
    userAgent: 'test',
    fetch: lastHangs,
    maxTries: 3,
    retryBaseMs: 1,
    stopGraceMs: 20,
  });
  expect(
    await client.works({ filter: 'is-update:true', select: 'DOI', rows: 10, cursor: '*' }, stop.signal),
  ).toMatchObject({ code: 'HARVEST_STOPPED' });
  expect(calls).toBe(3);
});

test('a redirect is not followed: the Plus token never reaches the host it points at, and the fault says where it pointed', async () => {
  const seenElsewhere: (string | null)[] = [];
  const elsewhere = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (
      seenElsewhere.push(req.headers.get('crossref-plus-api-token')),
      Response.json({ status: 'ok', message: { items: [] } })
    ),
  });
  const crossref = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response(null, { status: 302, headers: { location: `http://localhost:${elsewhere.port}/works` } }),
  });
  try {
    const client = new CrossrefClient({
      baseUrl: `http://127.0.0.1:${crossref.port}`,
      mailto: 'ops@example.org',
      userAgent: 'test',
      plusToken: 'PLUS-SECRET',
      maxTries: 3,
      retryBaseMs: 1,
    });
    const r = await client.works({ filter: 'is-update:true', select: 'DOI', rows: 10, cursor: '*' });
    expect(r).toMatchObject({ code: 'HARVEST_HTTP_ERROR' });
    expect((r as { message: string }).message).toContain(
      `HTTP 302, a redirect to "http://localhost:${elsewhere.port}/works", not followed`,
    );
    expect(seenElsewhere).toEqual([]);
  } finally {
    crossref.stop(true);
    elsewhere.stop(true);
  }
});
