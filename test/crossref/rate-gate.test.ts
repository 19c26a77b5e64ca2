import { describe, expect, test } from 'bun:test';
import { RateGate } from '../../src/crossref/index.ts';

/** The shared gate's waits that end at a deadline (the metadata lookup's), its pause after a 429, and its cap. */

const headers = (concurrency: string) =>
  new Headers({ 'x-rate-limit-limit': '1000', 'x-rate-limit-interval': '1s', 'x-concurrency-limit': concurrency });

describe('RateGate with a deadline', () => {
  test('a pause (429) reaching past the deadline: no start, at once', async () => {
    const gate = new RateGate();
    gate.pauseFor(60_000);
    expect(await gate.enter(performance.now() + 50)).toBeUndefined();
    gate.pauseFor(10); // a shorter pause does not shorten it
    expect(gate.pausedUntil - performance.now()).toBeGreaterThan(50_000);
  });

  test('a call waiting for a slot gives up at its deadline, and leaves no slot taken', async () => {
    const gate = new RateGate();
    const first = await gate.enter(performance.now() + 10_000);
    expect(first).toBeDefined();
    expect(await gate.enter(performance.now() + 20)).toBeUndefined();
    first!();
    const again = await gate.enter(performance.now() + 10_000);
    expect(again).toBeDefined();
    again!();
  });

  test('the cap bounds what the server advertises; a higher limit learnt opens its slots to the waiting calls', async () => {
    const gate = new RateGate(3);
    const held = [await gate.enter()];
    const waiting = [gate.enter(), gate.enter(), gate.enter()];
    let started = 0;
    for (const w of waiting) void w.then(() => started++);
    gate.learn(headers('50'));
    expect(gate.concurrency).toBe(3);
    await Promise.all(waiting.slice(0, 2));
    await Bun.sleep(0);
    expect(started).toBe(2); // three in flight: the third waits for a release
    held[0]!();
    (await waiting[2]!)();
    expect(started).toBe(3);
  });
});

describe('RateGate spacing', () => {
  test('a start that woke late (a busy thread) spaces the next from its real start, not its planned one', async () => {
    const gate = new RateGate();
    gate.learn(new Headers({ 'x-rate-limit-limit': '5', 'x-rate-limit-interval': '1s', 'x-concurrency-limit': '1' }));
    const spacing = gate.spacingMs(); // 210 ms: five calls a second, with 5% to spare
    (await gate.enter())();
    const plannedAt = performance.now() + spacing;
    const late = gate.enter();
    // the thread is held 150 ms past the second call's planned start, as a page's parse or a commit would hold it
    while (performance.now() < plannedAt + 150);
    (await late)();
    const lateStart = performance.now();
    (await gate.enter())();
    // spaced from the planned start, the third would follow the late second after some 60 ms: six calls could then
    // reach the server inside one second. The margin is for this thread being held between the two readings.
    expect(performance.now() - lateStart).toBeGreaterThanOrEqual(spacing - 50);
  });
});
