import { describe, expect, test } from 'bun:test';
import { LruMap } from '../../src/base/index.ts';

/** The one use-ordered map behind every cache bounded by least recent use. */
describe('LruMap', () => {
  test('get and set make a key the most recently used; peek does not', () => {
    const m = new LruMap<string, number>();
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      m.set(k, v);
    expect(m.oldest()).toBe('a');
    expect(m.get('a')).toBe(1); // a is now the newest
    expect(m.oldest()).toBe('b');
    expect(m.peek('b')).toBe(2); // still the oldest
    expect(m.oldest()).toBe('b');
    m.set('b', 20); // a new value moves it too
    expect(m.oldest()).toBe('c');
    expect(m.get('b')).toBe(20);
    expect(m.size).toBe(3);
  });

  test('delete and clear take keys out of the use order', () => {
    const m = new LruMap<string, number>();
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    expect(m.delete('b')).toBe(true);
    expect(m.delete('b')).toBe(false);
    expect(m.delete('a')).toBe(true);
    expect(m.oldest()).toBe('c');
    expect(m.delete('c')).toBe(true);
    expect([m.size, m.oldest(), m.get('c')]).toEqual([0, undefined, undefined]);
    m.set('d', 4);
    expect(m.oldest()).toBe('d');
    m.clear();
    expect([m.size, m.oldest(), m.peek('d')]).toEqual([0, undefined, undefined]);
  });

  test('evicting the oldest while adding keeps a bound, the most recently used kept', () => {
    const m = new LruMap<number, number>();
    for (let i = 0; i < 1000; i++) {
      m.get(0); // 0 read on every turn: never the oldest
      m.set(i, i);
      while (m.size > 10) m.delete(m.oldest()!);
    }
    expect(m.size).toBe(10);
    expect(m.peek(0)).toBe(0);
    expect(m.peek(991)).toBe(991); // 0 and the nine newest
    expect(m.peek(990)).toBeUndefined();
  });
});
