import { describe, expect, test } from 'bun:test';
import { HoldingsTable } from '../../src/entitlement/holdings-table.ts';
import { linesPast } from '../../src/entitlement/table-slot.ts';
import { seeded } from '../support/fixtures.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

describe('the entitlement index table', () => {
  test('a key is found by its string and by the bytes of any ASCII case of it; non-ASCII keys too', () => {
    const t = new HoldingsTable();
    t.set('10.1234/abc', bytes('one'));
    t.set('10.1234/é-x', bytes('two'));
    expect(text(t.get('10.1234/abc'))).toBe('one');
    const sent = bytes('xx10.1234/ABCyy');
    expect(text(t.getFolded(sent, 2, sent.length - 2))).toBe('one');
    expect(text(t.getFolded(bytes('10.1234/é-X'), 0, bytes('10.1234/é-X').length))).toBe('two');
    expect(text(t.get('10.1234/é-x'))).toBe('two');
    expect(t.get('10.1234/ab')).toBeUndefined();
    expect(t.get('10.1234/abcd')).toBeUndefined();
  });

  test('against a Map under random sets, replacements and deletes, through growth and compaction', () => {
    const rand = seeded(99);
    const t = new HoldingsTable();
    const model = new Map<string, string>();
    for (let i = 0; i < 60_000; i++) {
      const key = `10.${1000 + Math.floor(rand() * 5)}/k${Math.floor(rand() * 5000)}${rand() < 0.05 ? 'ü' : ''}`;
      if (rand() < 0.25) {
        t.delete(key);
        model.delete(key);
      } else {
        const value = `v${i}-${'x'.repeat(Math.floor(rand() * 200))}`;
        t.set(key, bytes(value));
        model.set(key, value);
      }
    }
    expect(t.size).toBe(model.size);
    for (const [k, v] of model) expect(text(t.get(k))).toBe(v);
    expect(new Map([...t.entries()].map(([k, v]) => [k, text(v)]))).toEqual(model);
    // the arena holds about the live records, not every version ever written
    const live = [...model].reduce((n, [k, v]) => n + k.length + v.length + 6, 0);
    expect(t.bytes).toBeLessThan(live * 4 + (1 << 20));
  });

  test('bytes handed out stay as they were when the key changes or the arena is compacted', () => {
    const t = new HoldingsTable();
    t.set('10.1234/a', bytes('first'));
    const held = t.get('10.1234/a')!;
    for (let i = 0; i < 20_000; i++) t.set('10.1234/a', bytes(`version ${i} ${'y'.repeat(100)}`));
    expect(text(held)).toBe('first');
    expect(text(t.get('10.1234/a'))).toBe(`version 19999 ${'y'.repeat(100)}`);
  });

  test("each slot counts the cache lines its record spans (touchRecord's bound), through growth, compaction and a move to another thread", () => {
    const rand = seeded(7);
    const t = new HoldingsTable();
    for (let i = 0; i < 40_000; i++) {
      const key = `10.1234/r${Math.floor(rand() * 3000)}`;
      if (rand() < 0.2) t.delete(key);
      else t.set(key, bytes('v'.repeat(1 + Math.floor(rand() * 600)))); // up to 10 lines: counts stop at 7
    }
    const spans = new Map<number, number>();
    for (const table of [t, HoldingsTable.fromParts(t.parts())]) {
      const { slots, arena } = table.parts();
      let records = 0;
      for (let s = 0; s < slots.length; s += 2) {
        const at = slots[s]! - 1;
        if (at < 0) continue;
        records++;
        // the record's extent read from its own header: u16 key length, key, u32 value length, value
        const k = (arena[at]! << 8) | arena[at + 1]!;
        const v = at + 2 + k + 4;
        const end = v + (((arena[v - 4]! << 24) | (arena[v - 3]! << 16) | (arena[v - 2]! << 8) | arena[v - 1]!) >>> 0);
        const span = Math.floor((end - 1) / 64) - Math.floor(at / 64);
        expect(linesPast(slots[s + 1]!)).toBe(Math.min(7, span));
        spans.set(Math.min(7, span), (spans.get(Math.min(7, span)) ?? 0) + 1);
      }
      expect(records).toBe(t.size);
    }
    expect([...spans.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // every count was met, the capped one too
  });
});
