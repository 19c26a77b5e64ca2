import { describe, expect, test } from 'bun:test';
import { foldedHash } from '../../../src/doi/index.ts';
import { readRecord, recordView } from '../../../src/entitlement/holdings-index/arena-record.ts';
import { HoldingsTable } from '../../../src/entitlement/holdings-index/holdings-table.ts';
import { linesPast } from '../../../src/entitlement/holdings-index/table-slot.ts';
import { seeded } from '../../support/fixtures.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

/** Every entry as text, sorted by key (a Map of 30k entries compares slowly in toEqual). */
const sorted = (t: HoldingsTable) => [...t.entries()].map(([k, v]) => `${k} ${text(v)}`).sort();

/** The value of the DOI sent as b[start, end), found by its bytes (ASCII letters folded), as a request finds it. */
function getFolded(t: HoldingsTable, b: Uint8Array, start: number, end: number): Uint8Array | undefined {
  const ref = t.refAt(b, start, end, foldedHash(b, start, end));
  if (ref < 0) return undefined;
  const v = t.read(ref, recordView());
  return v.bytes.subarray(v.valueStart, v.valueEnd);
}

describe('the entitlement index table', () => {
  test('a key is found by its string and by the bytes of any ASCII case of it; non-ASCII keys too', () => {
    const t = new HoldingsTable();
    t.set('10.1234/abc', bytes('one'));
    t.set('10.1234/é-x', bytes('two'));
    expect(text(t.get('10.1234/abc'))).toBe('one');
    const sent = bytes('xx10.1234/ABCyy');
    expect(text(getFolded(t, sent, 2, sent.length - 2))).toBe('one');
    expect(text(getFolded(t, bytes('10.1234/é-X'), 0, bytes('10.1234/é-X').length))).toBe('two');
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
      const { slots, segments } = table.parts();
      let records = 0;
      const view = recordView();
      for (let s = 0; s < slots.length; s += 2) {
        if (slots[s] === 0 || slots[s] === 0xffffffff) continue;
        records++;
        // the record's extent read from its own header (varint key length, key, varint value length, value)
        const ref = slots[s]! - 1;
        const at = (ref & ((1 << 25) - 1)) * 2;
        const end = readRecord(segments[ref >>> 25]!, at, view).valueEnd;
        const span = Math.floor((end - 1) / 64) - Math.floor(at / 64);
        expect(linesPast(slots[s + 1]!)).toBe(Math.min(7, span));
        spans.set(Math.min(7, span), (spans.get(Math.min(7, span)) ?? 0) + 1);
      }
      expect(records).toBe(t.size);
    }
    expect([...spans.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // every count was met, the capped one too
  });

  test('a table made by the builder (records first, slots at the end) answers as one made by set(), and changes after as it does', () => {
    const rand = seeded(5);
    const keys = [
      ...new Set(
        Array.from(
          { length: 30_000 },
          () => `10.${1000 + Math.floor(rand() * 40)}/b${Math.floor(rand() * 1e6)}${rand() < 0.02 ? 'ß' : ''}`,
        ),
      ),
    ].sort();
    const value = (k: string) => `${k}:${'z'.repeat(k.length % 300)}`; // some records span segments' ends
    const builder = HoldingsTable.builder();
    const bySet = new HoldingsTable();
    for (const k of keys) {
      const b = bytes(k);
      const v = bytes(value(k));
      builder.add(b, 0, b.length, v, 0, v.length);
      bySet.set(k, v);
    }
    const built = builder.finish();
    expect(built.size).toBe(keys.length);
    for (const k of keys) expect(text(built.get(k))).toBe(value(k));
    expect(built.get('10.1000/none')).toBeUndefined();
    expect(sorted(built)).toEqual(sorted(bySet));
    // then followed as a daemon follows files: growth past the build's load, replacements and deletes
    for (const t of [built, bySet]) {
      for (let i = 0; i < 20_000; i++) t.set(`10.9999/new${i}`, bytes(`n${i}`));
      for (const k of keys.slice(0, 5000)) t.delete(k);
      for (const k of keys.slice(5000, 8000)) t.set(k, bytes('changed'));
    }
    expect(built.size).toBe(bySet.size);
    expect(sorted(built)).toEqual(sorted(bySet));
    expect(() => builder.finish()).toThrow('once'); // its arena is the table's now
  });
});
