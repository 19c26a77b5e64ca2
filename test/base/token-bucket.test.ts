import { describe, expect, test } from 'bun:test';
import { TokenBucket } from '../../src/base/token-bucket.ts';

/** The one token bucket, on a clock the test moves: every figure is exact. */
describe('TokenBucket', () => {
  const clocked = (rate: number, burst: number) => {
    const clock = { t: 1_000 };
    return { clock, bucket: new TokenBucket(rate, burst, () => clock.t) };
  };

  test('starts full, empties by what is taken, and refills at its rate up to its burst', () => {
    const { clock, bucket } = clocked(2, 3);
    expect(bucket.available()).toBe(3);
    expect(bucket.full()).toBe(true);
    expect(bucket.waitMs(3)).toBe(0);
    bucket.take(3);
    expect(bucket.available()).toBe(0);
    expect(bucket.waitMs(1)).toBe(500);
    expect(bucket.waitMs(2)).toBe(1000);
    clock.t += 500;
    expect(bucket.available()).toBe(1);
    expect(bucket.waitMs(1)).toBe(0);
    clock.t += 10_000; // never more than the burst
    expect(bucket.available()).toBe(3);
    expect(bucket.full()).toBe(true);
  });

  test('a cost above the burst never passes', () => {
    const { bucket } = clocked(1000, 5);
    expect(bucket.waitMs(6)).toBe(Infinity);
    expect(bucket.reserve(6, 1e9)).toBe(-1);
    expect(bucket.available()).toBe(5);
  });

  test('fractional tokens add up, and available() counts whole ones', () => {
    const { clock, bucket } = clocked(0.5, 2);
    bucket.take(2);
    clock.t += 1_999;
    expect(bucket.available()).toBe(0);
    expect(bucket.waitMs(1)).toBe(1);
    clock.t += 1;
    expect(bucket.available()).toBe(1);
  });

  test('reserve lends tokens ahead, in order, only within the wait allowed', () => {
    const { clock, bucket } = clocked(10, 1);
    expect(bucket.reserve(1, 0)).toBe(0); // the one token there
    expect(bucket.reserve(1, 1000)).toBe(100); // the next, due in 100 ms
    expect(bucket.reserve(1, 1000)).toBe(200); // and the one after it: reservations queue
    expect(bucket.reserve(1, 250)).toBe(-1); // due in 300 ms: too late, and nothing is taken
    expect(bucket.reserve(1, 300)).toBe(300);
    clock.t += 300;
    expect(bucket.available()).toBe(0); // the lent tokens are paid back first
    expect(bucket.waitMs(1)).toBe(100);
    clock.t += 100;
    expect(bucket.available()).toBe(1);
  });

  test('a clock that steps back neither adds nor takes tokens', () => {
    const { clock, bucket } = clocked(1, 2);
    bucket.take(2);
    clock.t -= 60_000;
    expect(bucket.available()).toBe(0);
    clock.t += 60_000;
    expect(bucket.available()).toBe(0);
    clock.t += 1_000;
    expect(bucket.available()).toBe(1);
  });
});
