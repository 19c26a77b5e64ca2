import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { startServer } from '../../../src/http/index.ts';
import { type WebhookOptions, Webhooks } from '../../../src/webhooks/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import { storePerTest } from '../../support/temp-store.ts';
import { importCsvRows } from '../../support/update-imports.ts';
import { receiver } from '../../support/webhook-receiver.ts';
import { KEY, KEY_NO_UPDATES, makeApp } from '../http-support.ts';

/**
 * /v2.2/subscriptions through a real server (the wildcard paths go through Bun's router as the status pages'):
 * every action, its errors naming the field and why, an integrator seeing only its own, and the replica that does
 * not deliver saying where to go.
 */

const s = storePerTest();
let dir: ReturnType<typeof tempDir>;
let hooks: Webhooks | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;

beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  await server?.stop();
  await hooks?.close();
  [server, hooks] = [undefined, undefined];
  dir.remove();
});

function serve(withWebhooks = true, servedBy?: string, options: Partial<WebhookOptions> = {}): string {
  hooks = withWebhooks
    ? new Webhooks(s.store.changeFeed, {
        path: dir.path,
        mapSizeBytes: 1 << 26,
        pollMs: 60_000,
        allowHttp: true,
        allowPrivateTargets: true,
        concurrency: 4,
        perIntegratorConcurrency: 8,
        maxSubscriptionsPerIntegrator: 100,
        timeoutMs: 2000,
        retryBaseMs: 5,
        retryMaxMs: 10,
        retryForMs: 86_400_000,
        keepEventsMs: 30 * 86_400_000,
        ...options,
      })
    : undefined;
  hooks?.start();
  const app = makeApp({ production: { store: s.store } }, { subscriptions: { webhooks: hooks, servedBy } });
  server = startServer(app, '127.0.0.1', 0);
  return `${server.url}/v2.2/subscriptions`;
}

async function call(method: string, url: string, body?: unknown, key = KEY) {
  const r = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined, headers: r.headers };
}

describe('/v2.2/subscriptions', () => {
  test('create, list, show, watch list, pause, resume, rotate, deliveries, replay, delete', async () => {
    const base = serve();
    const hook = receiver({ secrets: () => secrets });
    const secrets: string[] = [];
    try {
      const made = await call('POST', base, { url: hook.url, dois: ['doi:10.5555/A', '10.5555/b'] });
      expect(made.status).toBe(201);
      expect(made.body.secret).toStartWith('whsec_');
      expect(made.body).toMatchObject({ url: hook.url, watch: 'list', watching: 2, types: null, paused: null });
      secrets.push(made.body.secret);
      const one = `${base}/${made.body.id}`;
      expect((await call('GET', base)).body.subscriptions.map((x: { id: string }) => x.id)).toEqual([made.body.id]);
      expect((await call('GET', one)).body.secret).toBeUndefined();
      // letter case and DOI forms are one DOI
      expect((await call('PUT', `${one}/dois`, { dois: ['https://doi.org/10.5555/a', '10.5555/C'] })).body).toEqual({
        watching: 3,
        changed: 1,
      });
      expect((await call('DELETE', `${one}/dois`, { dois: ['10.5555/B', '10.5555/zzz'] })).body).toEqual({
        watching: 2,
        changed: 1,
      });
      expect((await call('POST', `${one}/pause`)).body.paused.reason).toBe('paused by its owner');
      await importCsvRows(s.store, [`990001,10.5555/a,10.5555/n1,9/1/2020 0:00,Retraction,+Plagiarism;,`]);
      hooks!.poll();
      expect((await call('GET', one)).body.pending).toBe(1);
      expect((await call('POST', `${one}/resume`)).body.paused).toBeNull();
      await hook.until((r) => r.length === 1, 'the delivery after resuming');
      expect(hook.received[0]!.verifiedWith).toEqual([0]);
      const rotated = await call('POST', `${one}/rotate-secret`);
      expect(rotated.body.secret).toStartWith('whsec_');
      expect(rotated.body.previousSecretValidUntil).toBeString();
      const event = Number(hook.received[0]!.id.split('_').at(-1));
      // the receiver has it; its 2xx is recorded a moment later, with the position
      const deliveries = await waitFor(async () => {
        const d = await call('GET', `${one}/deliveries`);
        return d.body.deliveries.length > 0 && d;
      }, 'the attempt recorded');
      expect(deliveries.body.deliveries).toHaveLength(1);
      expect(deliveries.body.deliveries[0]).toMatchObject({ event, ok: true, status: 204, outcome: 'delivered' });
      secrets.push(rotated.body.secret);
      expect((await call('POST', `${one}/replay`, { fromEvent: event })).body).toEqual({ queued: 1 });
      await hook.until((r) => r.length === 2, 'the replay');
      expect(hook.received[1]!.verifiedWith).toEqual([0, 1]);
      expect((await call('DELETE', one)).status).toBe(204);
      expect((await call('GET', one)).status).toBe(404);
      expect((await call('GET', base)).body.subscriptions).toEqual([]);
    } finally {
      hook.stop();
    }
  });

  test('bad input is named by field and reason', async () => {
    const base = serve();
    const bad = async (body: unknown) => {
      const r = await call('POST', base, body);
      return `${r.status} ${r.body.error}: ${r.body.message}`;
    };
    expect(await bad({})).toBe(
      '400 BAD_REQUEST: /url: required: the body must be {"url": "https://...", "types"?, "watch"?, "prefixes"?, "dois"?}',
    );
    expect(await bad({ url: 'http://127.0.0.1/x', dois: ['10.5555/a', 'nope'] })).toStartWith(
      '400 BAD_REQUEST: dois[1]: "nope": ',
    );
    expect(await bad({ url: 'http://127.0.0.1/x', watch: 'prefixes' })).toBe(
      '400 BAD_REQUEST: prefixes: a subscription that watches hash prefixes needs at least one',
    );
    expect(await bad({ url: 'http://127.0.0.1/x', watch: 'prefixes', prefixes: ['z1'] })).toStartWith(
      '400 BAD_REQUEST: /prefixes/0: ',
    );
    expect(await bad({ url: 'http://127.0.0.1/x', dois: Array(10_001).fill('10.5555/a') })).toBe(
      '400 BAD_REQUEST: /dois: 10001 DOIs given; send at most 10000 per call',
    );
    expect(await bad({ url: 'http://127.0.0.1/x', watch: 'everything', dois: ['10.5555/a'] })).toBe(
      '400 BAD_REQUEST: dois: only a subscription with "watch": "list" takes DOIs (this one: "everything")',
    );
    const noKey = await fetch(base);
    expect(noKey.status).toBe(401);
    const wrongMethod = await call('PATCH', base);
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'GET, POST']);
    expect((await call('GET', `${base}/sub_x/nothing`)).status).toBe(404);
    // 10,000 DOIs fit in one call, over the other routes' body bound
    const many = Array.from({ length: 10_000 }, (_, i) => `10.5555/many.${i}`);
    const made = await call('POST', base, { url: 'http://127.0.0.1/x', dois: many });
    expect([made.status, made.body.watching]).toEqual([201, 10_000]);
  });

  test('a target named localhost and one subscription over the bound are 400s with stable codes', async () => {
    const base = serve(true, undefined, { allowPrivateTargets: false, maxSubscriptionsPerIntegrator: 1 });
    const local = await call('POST', base, { url: 'http://localhost:9/x', watch: 'everything' });
    expect([local.status, local.body.error]).toEqual([400, 'TARGET_REFUSED']);
    expect(local.body.message).toContain('a loopback address');
    expect((await call('POST', base, { url: 'http://93.184.216.34/x', watch: 'everything' })).status).toBe(201);
    const over = await call('POST', base, { url: 'http://93.184.216.34/y', watch: 'everything' });
    expect([over.status, over.body.error]).toEqual([400, 'TOO_MANY_SUBSCRIPTIONS']);
  });

  test('an integrator sees and changes only its own subscriptions', async () => {
    const base = serve();
    const made = await call('POST', base, { url: 'http://127.0.0.1/x', watch: 'everything' });
    const other = await call('GET', `${base}/${made.body.id}`, undefined, KEY_NO_UPDATES);
    expect([other.status, other.body.error]).toEqual([404, 'NOT_FOUND']);
    expect((await call('DELETE', `${base}/${made.body.id}`, undefined, KEY_NO_UPDATES)).status).toBe(404);
    expect((await call('GET', base, undefined, KEY_NO_UPDATES)).body.subscriptions).toEqual([]);
  });

  test('a replica that does not deliver says where to go', async () => {
    const base = serve(false, 'https://alerts.example.org');
    const r = await call('POST', base, { url: 'https://example.org/x' });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('WEBHOOKS_NOT_HERE');
    expect(r.body.message).toContain('[webhooks] enabled = true');
    expect(r.body.message).toContain('https://alerts.example.org');
  });

  test('/metrics shows deliveries, lag and paused subscriptions', async () => {
    const base = serve();
    await call('POST', base, { url: 'http://127.0.0.1:9/never', watch: 'everything' });
    const paused = await call('POST', base, { url: 'http://127.0.0.1:9/never', watch: 'everything' });
    await call('POST', `${base}/${paused.body.id}/pause`);
    const text = await (await fetch(`${server!.url}/metrics`)).text();
    expect(text).toContain('doi_holdings_webhook_subscriptions{paused="true"} 1');
    expect(text).toContain('doi_holdings_webhook_subscriptions{paused="false"} 1');
    expect(text).toContain(
      `doi_holdings_webhook_lag_seconds{subscription="${paused.body.id}",integrator="with-updates"} 0`,
    );
  });
});
