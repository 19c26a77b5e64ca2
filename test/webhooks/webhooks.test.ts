import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { lookup } from 'node:dns/promises';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { silentLogger } from '../../src/base/index.ts';
import { doiKey } from '../../src/doi/index.ts';
import { keyHash } from '../../src/store/index.ts';
import { CrossrefHarvest } from '../../src/updates/index.ts';
import { backoffMs, refusedRange, type Subscription, type WebhookOptions, Webhooks } from '../../src/webhooks/index.ts';
import { realWorks, startCrossrefApi } from '../support/crossref-api.ts';
import { tempDir, waitFor } from '../support/fixtures.ts';
import { storePerTest } from '../support/temp-store.ts';
import { importCsvRows, importUpdatedBy, rwRelay } from '../support/update-imports.ts';
import { type Received, receiver } from '../support/webhook-receiver.ts';

/**
 * Push alerts end to end below HTTP: a real store fed by the real importers, the webhooks' own LMDB environment,
 * and real receivers on loopback that verify every signature with the `standardwebhooks` package.
 */

const s = storePerTest();
let dir: ReturnType<typeof tempDir>;
let hooks: Webhooks | undefined;
const receivers: ReturnType<typeof receiver>[] = [];

beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  await hooks?.close();
  hooks = undefined;
  for (const r of receivers.splice(0)) r.stop();
  dir.remove();
});

const W1 = '10.5555/Watched.1';
const W2 = '10.5555/other.2';
const retraction = (id: number, work: string) =>
  `${id},${work},10.5555/notice.${id},9/1/2020 0:00,Retraction,+Falsification/Fabrication of Data;,`;

/** The settings the tests run with, but the folder. */
const OPTIONS = {
  mapSizeBytes: 1 << 28,
  pollMs: 60_000, // the tests call poll() after each import
  allowHttp: true,
  allowPrivateTargets: true,
  concurrency: 8,
  perIntegratorConcurrency: 8,
  maxSubscriptionsPerIntegrator: 100,
  timeoutMs: 2_000,
  retryBaseMs: 5,
  retryMaxMs: 20,
  retryForMs: 3 * 86_400_000,
  keepEventsMs: 30 * 86_400_000,
};

function open(extra: Partial<WebhookOptions> = {}): Webhooks {
  hooks = new Webhooks(s.store.changeFeed, {
    ...OPTIONS,
    path: dir.path,
    ...extra,
  });
  hooks.start();
  return hooks;
}

/** A receiver verifying against the secret(s) a subscription is given (filled in after creation). */
function hook(answer?: (n: number, r: Received) => number | Response | Promise<Response>) {
  const secrets: string[] = [];
  const r = receiver({ secrets: () => secrets, answer });
  receivers.push(r);
  return { ...r, secrets };
}

async function subscribe(
  h: Webhooks,
  r: { url: string; secrets: string[] },
  req: Partial<Parameters<Webhooks['create']>[1]> = {},
): Promise<string> {
  const made = await h.create('acme', { url: r.url, ...req });
  if ('code' in made) throw new Error(made.message);
  expect(made.secret).toStartWith('whsec_');
  r.secrets.push(made.secret);
  return made.view.id;
}

/** Waits until the subscription has nothing pending and nothing in flight (its last answer recorded). */
async function settled(h: Webhooks, id: string): Promise<void> {
  await waitFor(() => {
    const v = h.show('acme', id);
    return !('code' in v) && v.pending === 0 && h.deliveries.active === 0;
  }, 'every delivery recorded');
}

const types = (list: { updateType: string }[]) => list.map((u) => u.updateType);

describe('deliveries', () => {
  test('an import delivers to the list, prefix and everything subscriptions that watch the work, signed', async () => {
    const h = open();
    const [list, other, prefix, everything] = [hook(), hook(), hook(), hook()];
    const listId = await subscribe(h, list, { dois: [`https://doi.org/${W1.toUpperCase()}`] });
    await subscribe(h, other, { dois: ['10.5555/never'] });
    const w1Prefix = keyHash(doiKey(W1)).slice(0, 3);
    await subscribe(h, prefix, { watch: 'prefixes', prefixes: [w1Prefix.toUpperCase()] });
    await subscribe(h, everything, { watch: 'everything' });
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await list.until((r) => r.length === 1, 'the watched work');
    await everything.until((r) => r.length === 2, 'both works');
    await prefix.until((r) => r.length >= 1, 'the work under the prefix');
    const [got] = list.received;
    expect(got!.verifiedWith).toEqual([0]);
    expect(got!.body.type).toBe('updates.changed');
    expect(doiKey(got!.body.doi)).toBe(doiKey(W1));
    expect(types(got!.body.updates)).toEqual(['retraction']);
    expect(got!.body.previous).toEqual([]);
    expect(got!.id).toMatch(new RegExp(`^msg_${listId}_\\d+$`));
    expect(everything.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
    expect(everything.received.map((r) => doiKey(r.body.doi)).sort()).toEqual([doiKey(W1), doiKey(W2)].sort());
    // the prefix subscription gets every work under it, the other too when its hash shares the prefix
    const underPrefix = [W1, W2].filter((d) => keyHash(doiKey(d)).startsWith(w1Prefix)).map(doiKey);
    await prefix.until((r) => r.length === underPrefix.length, 'every work under the prefix');
    expect(prefix.received.map((r) => doiKey(r.body.doi))).toEqual(underPrefix);
    expect(other.received).toEqual([]);
  });

  test('a withdrawal sends an empty list with the previous one; a reinstatement the list again', async () => {
    const h = open();
    const r = hook();
    await subscribe(h, r, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await r.until((x) => x.length === 1, 'the retraction');
    await importCsvRows(s.store, [retraction(990002, W2)]); // W1's record left the database
    h.poll();
    await r.until((x) => x.length === 2, 'the withdrawal');
    expect(r.received[1]!.body.updates).toEqual([]);
    expect(types(r.received[1]!.body.previous)).toEqual(['retraction']);
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await r.until((x) => x.length === 3, 'the reinstatement');
    expect(types(r.received[2]!.body.updates)).toEqual(['retraction']);
    expect(r.received[2]!.body.previous).toEqual([]);
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
  });

  test('a Crossref record triggers the subscriptions of its update type only', async () => {
    const h = open();
    const [corrections, retractions] = [hook(), hook()];
    await subscribe(h, corrections, { watch: 'everything', types: ['correction'] });
    await subscribe(h, retractions, { dois: [W1], types: ['retraction'] });
    await importUpdatedBy(s.store, W1, [rwRelay('10.5555/corr.1', '991001', 'correction')]);
    await importCsvRows(s.store, [retraction(990002, W2)]);
    h.poll();
    await corrections.until((x) => x.length === 1, 'the correction');
    expect(types(corrections.received[0]!.body.updates)).toEqual(['correction']);
    expect(doiKey(corrections.received[0]!.body.doi)).toBe(doiKey(W1));
    // W1 is watched by `retractions`, but what changed is a correction; W2's retraction it does not watch
    await importCsvRows(s.store, [retraction(990002, W2), retraction(990003, W1)]);
    h.poll();
    await retractions.until((x) => x.length === 1, 'the retraction of W1');
    expect(types(retractions.received[0]!.body.updates).sort()).toEqual(['correction', 'retraction']);
    expect(types(retractions.received[0]!.body.previous)).toEqual(['correction']);
  });

  test('a Crossref harvest (the loopback Crossref API) delivers the retraction it brings', async () => {
    const article = '10.1016/s0140-6736(20)31180-6';
    const h = open();
    const r = hook();
    await subscribe(h, r, { dois: [article.toUpperCase()] });
    const api = await startCrossrefApi({ works: realWorks() });
    try {
      const harvest = new CrossrefHarvest(
        {
          name: 'crossref',
          url: api.url,
          mailto: 'ops@example.org',
          everyMs: 3_600_000,
          rows: 100,
          fullEveryMs: 0,
          staleAfterMs: 1e9,
          nice: 0,
          idle: false,
        },
        [s.store],
        silentLogger,
        { version: 'test', retryBaseMs: 20 },
      );
      const ran = await harvest.run();
      if ('code' in ran) throw new Error(ran.message);
    } finally {
      await api.stop();
    }
    h.poll();
    await r.until((x) => x.length === 1, "the article's retraction");
    expect(doiKey(r.received[0]!.body.doi)).toBe(article);
    expect(types(r.received[0]!.body.updates)).toContain('retraction');
    expect(r.received[0]!.body.previous).toEqual([]);
    expect(r.received[0]!.verifiedWith).toEqual([0]);
  });

  test("one integrator's slow receivers hold only its share of the slots: another's deliveries go on", async () => {
    const h = open({ concurrency: 3, perIntegratorConcurrency: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // acme's receiver answers only once the gate opens: its deliveries are held, however long
    const slow = hook(() => gate.then(() => new Response(null, { status: 204 })));
    for (let i = 0; i < 3; i++) await subscribe(h, slow, { watch: 'everything' });
    const fast = hook();
    const other = await h.create('beta', { url: fast.url, watch: 'everything' });
    if ('code' in other) throw new Error(other.message);
    fast.secrets.push(other.secret);
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await slow.until((x) => x.length === 2, "acme's share in flight");
    await fast.until((x) => x.length === 1, "beta's delivery while acme's are held");
    expect(slow.received).toHaveLength(2);
    expect(fast.received[0]!.verifiedWith).toEqual([0]);
    release();
    await slow.until((x) => x.length === 3, "acme's third, once a slot of its own is free");
  });

  test('an integrator holds at most maxSubscriptionsPerIntegrator subscriptions', async () => {
    const h = open({ maxSubscriptionsPerIntegrator: 2 });
    const r = hook();
    const first = await subscribe(h, r, { watch: 'everything' });
    await subscribe(h, r, { watch: 'everything' });
    const over = await h.create('acme', { url: r.url, watch: 'everything' });
    expect('code' in over && over.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect('code' in (await h.create('beta', { url: r.url, watch: 'everything' }))).toBe(false);
    expect(h.remove('acme', first)).toBe(true);
    expect('code' in (await h.create('acme', { url: r.url, watch: 'everything' }))).toBe(false);
  });

  test('failures are retried with the same webhook-id, and events stay in feed order', async () => {
    const h = open();
    const r = hook((n) => (n < 3 ? 500 : 200));
    const id = await subscribe(h, r, { watch: 'everything' });
    const works = ['10.5555/a', '10.5555/b', '10.5555/c'];
    for (let i = 0; i < works.length; i++) {
      await importCsvRows(
        s.store,
        works.slice(0, i + 1).map((x, j) => retraction(990100 + j, x)),
      );
      h.poll();
    }
    await r.until((x) => x.filter((y) => y.status === 200).length === 3, 'the three events delivered');
    await settled(h, id);
    expect(r.received.slice(0, 4).map((x) => x.id)).toEqual(Array(4).fill(r.received[0]!.id));
    const delivered = r.received.filter((x) => x.status === 200);
    expect(delivered.map((x) => doiKey(x.body.doi))).toEqual(works);
    const eventOf = (x: Received) => Number(x.id.split('_').at(-1));
    expect(delivered.map(eventOf)).toEqual([...delivered.map(eventOf)].sort((a, b) => a - b));
    const attempts = h.attempts('acme', id);
    if ('code' in attempts) throw new Error(attempts.message);
    expect(attempts.map((a) => a.ok)).toEqual([true, true, true, false, false, false]);
    // the outcome is a stable code, the metric's label; the error is words
    expect(attempts.map((a) => a.outcome)).toEqual([...Array(3).fill('delivered'), ...Array(3).fill('http_error')]);
    expect(Object.fromEntries(h.deliveries.outcomes)).toEqual({ delivered: 3, http_error: 3 });
    expect(attempts.at(-1)!.error).toBe('the receiver answered 500');
    const view = h.show('acme', id);
    if ('code' in view) throw new Error(view.message);
    expect(view.pending).toBe(0);
    expect(view.failing).toBeNull();
  });

  test('a delivery failing for the retry period pauses its subscription with the reason; resuming delivers it', async () => {
    let down = true;
    let paused!: (s: Subscription) => void;
    const pausedNow = new Promise<Subscription>((resolve) => {
      paused = resolve;
    });
    const h = open({ retryForMs: 30, onPaused: (x) => paused(x) });
    const r = hook(() => (down ? 503 : 204));
    const id = await subscribe(h, r, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    const sub = await pausedNow;
    expect(sub.paused!.reason).toContain('last: the receiver answered 503');
    const view = h.show('acme', id);
    if ('code' in view) throw new Error(view.message);
    expect(view.paused?.reason).toContain('failed for');
    expect(view.pending).toBe(1);
    down = false;
    h.setPaused('acme', id, false);
    await r.until((x) => x.some((y) => y.status === 204), 'the delivery after resuming');
    expect(new Set(r.received.map((x) => x.id)).size).toBe(1);
  });

  test('a replay from an event sends it and the later ones again, each with a webhook-id of its own', async () => {
    const h = open();
    const r = hook();
    const id = await subscribe(h, r, { watch: 'everything' });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await r.until((x) => x.length === 2, 'two events');
    const first = Number(r.received[0]!.id.split('_').at(-1));
    await settled(h, id);
    expect(h.replay('acme', id, first)).toEqual({ queued: 2 });
    await r.until((x) => x.length === 4, 'the replay');
    // a receiver deduplicating by webhook-id (as the docs ask) takes the replay: msg_<sub>_<event>_r1
    expect(r.received.slice(2).map((x) => x.id)).toEqual(r.received.slice(0, 2).map((x) => `${x.id}_r1`));
    await settled(h, id);
    expect(h.replay('acme', id, first + 1)).toEqual({ queued: 1 });
    await r.until((x) => x.length === 5, 'the second replay');
    expect(r.received[4]!.id).toBe(`${r.received[1]!.id}_r2`);
  });

  test('a replay looks at a bounded number of events per call and says where to call again from', async () => {
    const h = open({ replayEventsPerCall: 2 });
    const r = hook();
    const id = await subscribe(h, r, { dois: [W1, '10.5555/c'] });
    const works = [W1, W2, '10.5555/c'];
    for (let i = 0; i < works.length; i++) {
      await importCsvRows(
        s.store,
        works.slice(0, i + 1).map((x, j) => retraction(990100 + j, x)),
      );
      h.poll();
    }
    await r.until((x) => x.length === 2, 'the two watched works');
    await settled(h, id);
    const first = Number(r.received[0]!.id.split('_').at(-1));
    // events first and first + 1 looked at (the second not watched); the third is where the next call starts
    expect(h.replay('acme', id, first)).toEqual({ queued: 1, nextEvent: first + 2 });
    expect(h.replay('acme', id, first + 2)).toEqual({ queued: 1 });
    await r.until((x) => x.length === 4, 'both replayed');
    expect(r.received.slice(2).map((x) => x.id)).toEqual([`${r.received[0]!.id}_r1`, `${r.received[1]!.id}_r2`]);
  });

  test('a replay of the event in flight is sent after it, not lost with its acknowledgment', async () => {
    const h = open();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const r = hook((n) => (n === 0 ? gate.then(() => new Response(null, { status: 204 })) : 204));
    const id = await subscribe(h, r, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await r.until((x) => x.length === 1, 'the first, held');
    const event = Number(r.received[0]!.id.split('_').at(-1));
    expect(h.replay('acme', id, event)).toEqual({ queued: 1 });
    release();
    await r.until((x) => x.length === 2, 'the replay');
    expect(r.received[1]!.id).toBe(`${r.received[0]!.id}_r1`);
    await settled(h, id);
  });

  test('a rotated secret signs beside the new one', async () => {
    const h = open();
    const r = hook();
    const id = await subscribe(h, r, { dois: [W1, W2] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await r.until((x) => x.length === 1, 'the first');
    const rotated = h.rotateSecret('acme', id);
    if ('code' in rotated) throw new Error(rotated.message);
    r.secrets.push(rotated.secret);
    expect(rotated.view.previousSecretValidUntil).toBeDefined();
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await r.until((x) => x.length === 2, 'the second');
    expect(r.received[0]!.verifiedWith).toEqual([0]);
    expect(r.received[1]!.verifiedWith).toEqual([0, 1]);
    expect(r.received[1]!.signature.split(' ')).toHaveLength(2);
  });

  test('a second rotation within 24 hours keeps the first old secret signing until its own end', async () => {
    // rotated 2 hours and 1 hour ago; the delivery's timestamp is now (receivers refuse one 5 minutes off)
    let offset = -2 * 3_600_000;
    const h = open({ now: () => Date.now() + offset });
    const r = hook();
    const id = await subscribe(h, r, { dois: [W1] });
    for (let i = 0; i < 2; i++) {
      const rotated = h.rotateSecret('acme', id);
      if ('code' in rotated) throw new Error(rotated.message);
      r.secrets.push(rotated.secret);
      offset += 3_600_000;
    }
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await r.until((x) => x.length === 1, 'the delivery');
    expect(r.received[0]!.verifiedWith).toEqual([0, 1, 2]);
    // 22 hours on, the first secret's 24 hours have ended: two sign (their timestamp too far off to verify here)
    offset += 22 * 3_600_000;
    await importCsvRows(s.store, [retraction(990002, W2)]);
    h.poll();
    await r.until((x) => x.length === 2, 'the withdrawal');
    expect(r.received[1]!.signature.split(' ')).toHaveLength(2);
  });

  test('resuming a subscription that is not paused leaves its retry period as it was', async () => {
    let clock = Date.now();
    const h = open({ now: () => clock, retryBaseMs: 3_600_000, retryMaxMs: 3_600_000 });
    const r = hook(() => 500);
    const id = await subscribe(h, r, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    const failing = await waitFor(() => {
      const v = h.show('acme', id);
      return !('code' in v) && v.failing;
    }, 'the failure recorded');
    clock += 60_000;
    const resumed = h.setPaused('acme', id, false);
    if ('code' in resumed) throw new Error(resumed.message);
    expect(resumed.failing).toEqual(failing);
  });

  test('deliveries go on after a restart from where they were (the position is in the webhooks store)', async () => {
    const h = open();
    const r = hook();
    await subscribe(h, r, { dois: [W1, W2] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await r.until((x) => x.length === 1, 'the first');
    await h.close();
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    const again = open();
    again.poll();
    await r.until((x) => x.length === 2, 'the change made while stopped');
    expect(doiKey(r.received[1]!.body.doi)).toBe(doiKey(W2));
    expect(r.received[1]!.verifiedWith).toEqual([0]);
  });

  test('events older than keepEventsMs are pruned at a start, but never one a subscription has still to send', async () => {
    let clock = Date.now();
    const keep = { keepEventsMs: 60_000, now: () => clock };
    const h = open(keep);
    const [sent, paused] = [hook(), hook()];
    const sentId = await subscribe(h, sent, { watch: 'everything' });
    const pausedId = await subscribe(h, paused, { watch: 'everything' });
    h.setPaused('acme', pausedId, true);
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    h.poll();
    await sent.until((x) => x.length === 2, 'both events');
    await settled(h, sentId);
    const first = Number(sent.received[0]!.id.split('_').at(-1));
    await h.close();
    clock += 120_000; // both events are older than kept now; the paused subscription still has them to send
    const pruning = open(keep);
    await pruning.deliveries.running;
    await pruning.close(); // its start pruned what it may (a stop waits for the chunk in hand)
    const again = open(keep);
    expect(again.replay('acme', sentId, first)).toEqual({ queued: 2 }); // kept: still queued for the paused one
    await settled(again, sentId);
    again.setPaused('acme', pausedId, false);
    await paused.until((x) => x.length === 2, 'the paused one, resumed');
    await settled(again, pausedId);
    await again.close();
    const third = open(keep);
    await third.deliveries.running;
    // nothing queued any more: the start prunes both (a stop waits for its chunk in hand)
    await third.close();
    const fourth = open(keep);
    expect(fourth.replay('acme', sentId, first)).toEqual({ queued: 0 });
    expect(fourth.show('acme', pausedId)).toMatchObject({ pending: 0, deliveredThrough: first + 1 });
  });
});

describe('in a delivery process (as the daemon runs them)', () => {
  test('subscriptions paused and resumed in a row each get their events, signed; outcomes come back', async () => {
    const h = new Webhooks(
      { store: { ...s.store.opened, env: s.store.env }, nice: 0, idle: false },
      { ...OPTIONS, path: dir.path, pollMs: 20 },
    );
    hooks = h;
    h.start();
    await h.deliveries.running;
    const r = hook();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await subscribe(h, r, { watch: 'everything' }));
    for (const id of ids) h.setPaused('acme', id, true);
    await importCsvRows(s.store, [retraction(990001, W1), retraction(990002, W2)]);
    await waitFor(() => ids.every((id) => (h.show('acme', id) as { pending: number }).pending === 2), 'events queued');
    expect(r.received).toEqual([]);
    // each resume is its own commit and message; many arrive in one turn of the delivery process
    for (const id of ids) h.setPaused('acme', id, false);
    await r.until((x) => x.length === 60, 'two events for each subscription');
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(new Set(r.received.map((x) => x.id)).size).toBe(60);
    await waitFor(() => h.deliveries.outcomes.get('delivered') === 60, 'the outcomes told back');
  }, 30_000);
});

describe('targets', () => {
  test('private and loopback addresses and plain http are refused unless the config allows them', async () => {
    const h = open({ allowPrivateTargets: false, allowHttp: false });
    const refused = async (url: string) => {
      const r = await h.create('acme', { url });
      return 'code' in r ? `${r.code}: ${r.message}` : 'taken';
    };
    expect(await refused('http://example.org/hook')).toBe('TARGET_REFUSED: url: the scheme must be https (got http)');
    expect(await refused('https://127.0.0.1/hook')).toContain('loopback');
    expect(await refused('https://169.254.169.254/latest')).toContain('link-local');
    expect(await refused('https://[::1]/hook')).toContain('loopback');
    expect(await refused('https://10.1.2.3/hook')).toContain('private');
    expect(await refused('ftp://example.org/')).toContain('https');
    expect(await refused('not a url')).toContain('not an absolute URL');
  });

  test('a name that resolves to loopback is refused at creation (localhost), 400 TARGET_REFUSED', async () => {
    const h = open({ allowPrivateTargets: false, allowHttp: true });
    const r = hook();
    const made = await h.create('acme', { url: r.url.replace('127.0.0.1', 'localhost'), dois: [W1] });
    expect('code' in made && `${made.code}: ${made.message}`).toMatch(
      /^TARGET_REFUSED: url: localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
    const nowhere = await h.create('acme', { url: 'https://nowhere.invalid/hook' });
    expect('code' in nowhere && nowhere.message).toMatch(/^url: nowhere\.invalid (does not|did not) resolve/);
  });

  test('a name that resolves to loopback by the time of delivery is refused then, and nothing reaches the receiver', async () => {
    const r = hook();
    const resolved: string[] = [];
    // public when the subscription is made, loopback once it delivers (DNS rebinding)
    const resolve = async (host: string) => {
      resolved.push(host);
      return [{ address: resolved.length === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    };
    const h = open({ allowPrivateTargets: false, allowHttp: true, resolve });
    const made = await h.create('acme', { url: r.url.replace('127.0.0.1', 'hooks.example'), dois: [W1] });
    if ('code' in made) throw new Error(made.message);
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    const attempts = await waitFor(() => {
      const a = h.attempts('acme', made.view.id);
      return !('code' in a) && a.length > 0 && a;
    }, 'an attempt');
    expect(attempts[0]!.error).toStartWith('refused: hooks.example resolves to 127.0.0.1, a loopback address');
    expect(attempts[0]!.outcome).toBe('refused');
    expect(r.received).toEqual([]);
  });

  test("a name's lookup is inside the attempt's time-out: a resolver that never answers is a time-out", async () => {
    const r = hook();
    const h = open({ timeoutMs: 100, resolve: () => new Promise(() => undefined) });
    const id = await subscribe(h, { url: r.url.replace('127.0.0.1', 'hangs.example'), secrets: [] }, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    const attempts = await waitFor(() => {
      const a = h.attempts('acme', id);
      return !('code' in a) && a.length > 0 && a;
    }, 'an attempt');
    expect([attempts[0]!.status, attempts[0]!.outcome, attempts[0]!.error]).toEqual([
      0,
      'timeout',
      'no answer within 100 ms',
    ]);
  });

  test('a redirect is not followed: the attempt fails and is retried', async () => {
    const h = open();
    const elsewhere = hook();
    const r = hook((n) => (n === 0 ? new Response(null, { status: 307, headers: { location: elsewhere.url } }) : 204));
    const id = await subscribe(h, r, { dois: [W1] });
    await importCsvRows(s.store, [retraction(990001, W1)]);
    h.poll();
    await r.until((x) => x.length === 2, 'the retry after the redirect');
    const attempts = h.attempts('acme', id);
    if ('code' in attempts) throw new Error(attempts.message);
    expect(attempts.at(-1)!.error).toBe(`redirect to ${elsewhere.url} not followed`);
    expect(attempts.at(-1)!.outcome).toBe('redirect');
    expect(elsewhere.received).toEqual([]);
  });

  test('an https target is reached at the address checked, its certificate verified against its name', async () => {
    const tls = join(import.meta.dir, '..', 'fixtures', 'webhooks-tls');
    const [cert, key] = ['cert.pem', 'key.pem'].map((f) => readFileSync(join(tls, f), 'utf8')) as [string, string];
    // where a delivery to "localhost" connects: the resolver's first answer, as the deliveries take it
    const { address } = await lookup('localhost', { verbatim: true });
    const got: { host: string | null; ok: boolean }[] = [];
    let secret = '';
    const server = Bun.serve({
      hostname: address,
      port: 0,
      tls: { cert, key },
      async fetch(request) {
        const body = await request.text();
        let ok = true;
        try {
          new Webhook(secret).verify(body, Object.fromEntries(request.headers));
        } catch {
          ok = false;
        }
        got.push({ host: request.headers.get('host'), ok });
        return new Response(null, { status: 204 });
      },
    });
    try {
      const h = open({ ca: cert });
      const made = await h.create('acme', { url: `https://localhost:${server.port}/hook`, dois: [W1] });
      if ('code' in made) throw new Error(made.message);
      secret = made.secret;
      await importCsvRows(s.store, [retraction(990001, W1)]);
      h.poll();
      await settled(h, made.view.id);
      expect(got).toEqual([{ host: `localhost:${server.port}`, ok: true }]);
    } finally {
      server.stop(true);
    }
  });

  test('the refused ranges', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0'])
      expect(refusedRange(a), a).toBeDefined();
    for (const a of [
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      'ff02::1',
    ])
      expect(refusedRange(a), a).toBeDefined();
    // a private IPv4 address inside 6to4 (2002::/16) or IPv4-translated (::ffff:0:a.b.c.d) forms
    for (const a of ['2002:7f00:1::1', '2002:a00:1::', '2002:a9fe:a9fe::1', '::ffff:0:10.0.0.1', '::ffff:0:7f00:1'])
      expect(refusedRange(a), a).toBeDefined();
    // Teredo (2001:0::/32): a loopback client (127.0.0.1 inverted) or a private server (10.0.0.1)
    for (const a of ['2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:a00:1::f7f7:f7f7'])
      expect(refusedRange(a), a).toBeDefined();
    expect(refusedRange('2001:0:4136:e378:8000:63bf:f7f7:f7f7')).toBeUndefined(); // 65.54.227.120 and 8.8.8.8
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '2002:808:808::1'])
      expect(refusedRange(a), a).toBeUndefined();
  });

  test("the subscriptions' folder is made readable by the daemon's user alone", async () => {
    const path = join(dir.path, 'hooks');
    open({ path });
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  test('backoff doubles from the base up to the cap, jittered over its upper half', () => {
    const at = (random: number) =>
      [1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, { retryBaseMs: 100, retryMaxMs: 1_000 }, random));
    expect(at(1)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(at(0)).toEqual([50, 100, 200, 400, 500, 500]);
  });
});
