import { expect, test } from 'bun:test';
import { CircuitBreaker } from '../../../src/entitlement/platforms/breaker.ts';

test('opens after N consecutive failures; a success in between starts the count again', () => {
  let now = 0;
  let opens = 0;
  const b = new CircuitBreaker(
    3,
    1000,
    () => now,
    () => opens++,
  );
  b.failure(b.allow()!);
  b.failure(b.allow()!);
  b.success(b.allow()!);
  b.failure(b.allow()!);
  b.failure(b.allow()!);
  expect(b.state).toBe('closed');
  b.failure(b.allow()!);
  expect([b.state, b.allow(), opens]).toEqual(['open', undefined, 1]);
  now += 999;
  expect(b.allow()).toBeUndefined();
});

test('after the cool-down one probe goes out; only its outcome decides, calls from before the opening do not', () => {
  let now = 0;
  let opens = 0;
  const b = new CircuitBreaker(
    1,
    1000,
    () => now,
    () => opens++,
  );
  const early = b.allow()!; // started while closed, still out when the breaker opens
  b.failure(b.allow()!);
  expect(b.state).toBe('open');
  b.success(early); // a late success from before the opening does not close it
  expect(b.state).toBe('open');
  now += 1000;
  const probe = b.allow();
  expect([b.state, probe?.probe, b.allow()]).toEqual(['half-open', true, undefined]);
  b.failure(early); // nor does a late failure reopen it under the probe
  expect(opens).toBe(1);
  b.failure(probe!);
  expect([b.state, opens]).toEqual(['open', 2]);
  now += 1000;
  const second = b.allow()!;
  b.cancel(second); // the probe never went out: the next call may test instead
  b.success(b.allow()!);
  expect(b.state).toBe('closed');
});

test('calls from before an opening do not move the breaker after a probe closed it, nor after it opens again', () => {
  let now = 0;
  let opens = 0;
  const b = new CircuitBreaker(
    2,
    1000,
    () => now,
    () => opens++,
  );
  const stale = [b.allow()!, b.allow()!, b.allow()!, b.allow()!]; // out while it was closed, still out below
  b.failure(b.allow()!);
  b.failure(b.allow()!);
  expect([b.state, opens]).toEqual(['open', 1]);
  now += 1000;
  b.success(b.allow()!); // the probe closes it
  expect(b.state).toBe('closed');
  b.failure(stale[0]!);
  b.failure(stale[1]!); // two failures in a row would open it, were they counted
  expect([b.state, opens]).toEqual(['closed', 1]);
  // a failure since the closing counts; a stale success does not end the run of failures
  b.failure(b.allow()!);
  b.success(stale[2]!);
  b.failure(b.allow()!);
  expect([b.state, opens]).toEqual(['open', 2]);
  // nor, once open again, does a stale ticket close it or take the probe's turn
  now += 1000;
  const probe = b.allow()!;
  b.success(stale[3]!);
  b.cancel(stale[3]!);
  expect([b.state, b.allow()]).toEqual(['half-open', undefined]);
  b.failure(probe);
  expect([b.state, opens]).toEqual(['open', 3]);
});
