import fc from 'fast-check';
import { awkwardString, doiForms } from './fuzz-support.ts';

/**
 * JSON text for the fuzz tests, written by hand rather than by JSON.stringify so that it can carry what a
 * hostile or careless client writes and JSON.parse still reads: duplicate keys (the last one counts),
 * `__proto__` as an own key, \u escapes of any character (also of key names), odd whitespace, numbers
 * JSON.stringify never writes (`1e400`, `-0`), and very long or very deep values.
 */

export type J = null | boolean | number | string | J[] | Obj | Raw;
/** an object as its members in order: a key may repeat, and `__proto__` is just a key */
export interface Obj {
  obj: [string, J][];
}
/** JSON text written as it is (deep nesting, odd numbers) */
export interface Raw {
  raw: string;
}

export const obj = (entries: [string, J][]): Obj => ({ obj: entries });
export const isObj = (v: J): v is Obj => typeof v === 'object' && v !== null && 'obj' in v;

/** How a value is written: `escape` > 0 writes every escape-th character of strings as \uXXXX; `space` between tokens. */
export interface Style {
  escape: number;
  space: string;
}
export const PLAIN: Style = { escape: 0, space: '' };

export const styleArb: fc.Arbitrary<Style> = fc.record({
  escape: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 4 })),
  // JSON's whitespace, without the line feed (a deposit line ends there)
  space: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, fc.constantFrom(' ', '\t', '  ', ' \r ', '\t \t')),
});

export function ser(v: J, style: Style = PLAIN): string {
  const s = style.space;
  if (v === null || typeof v === 'boolean' || typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'string') return str(v, style);
  if (Array.isArray(v)) return `[${s}${v.map((x) => ser(x, style)).join(`${s},${s}`)}${s}]`;
  if ('raw' in v) return v.raw;
  return `{${s}${v.obj.map(([k, x]) => `${str(k, style)}${s}:${s}${ser(x, style)}`).join(`${s},${s}`)}${s}}`;
}

/** A JSON string literal for `v`, with every `escape`-th UTF-16 unit written as \uXXXX (same meaning). */
function str(v: string, style: Style): string {
  if (style.escape === 0) return JSON.stringify(v);
  let out = '"';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (i % style.escape === 0 || c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff))
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += v[i];
  }
  return `${out}"`;
}

/** Keys a record might be sent with: the real ones, near misses, and the ones that trouble plain objects. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('doi', 'accessType', 'deleted', 'vor', 'url', 'contentType', 'dois', 'org', 'uid'),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'DOI',
      'Doi',
      'access_type',
      'accesstype',
      'vor ',
      ' doi',
      'do\u0131',
      '',
      'a/b',
      '~0',
      '~1',
      '0',
      'length',
      'title',
      'ipv4',
    ),
  },
  awkwardString(6),
);

/** A JSON.parse-style value as J (a plain object becomes an Obj, its own keys in order, `__proto__` included). */
export function fromJson(x: unknown): J {
  if (Array.isArray(x)) return x.map(fromJson);
  if (x !== null && typeof x === 'object')
    return obj(Object.keys(x).map((k) => [k, fromJson((x as Record<string, unknown>)[k])]));
  return x as J;
}

/** Values of every JSON type, some huge or deep, some in the shapes the schemas look for. */
export const valueArb: fc.Arbitrary<J> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(fromJson) },
  { weight: 3, arbitrary: doiForms() },
  { weight: 2, arbitrary: awkwardString(16) },
  fc.constantFrom<J>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    '',
    [],
    obj([]),
    'open',
    'paid',
    'https://h.example/x',
    'http://',
    { raw: '-0' },
    { raw: '1e400' },
    { raw: '12345678901234567890123' },
    { raw: '1E-400' },
  ),
  fc.integer({ min: 1, max: 4000 }).map((n): J => ({ raw: '['.repeat(n) + ']'.repeat(n) })),
  fc.integer({ min: 1, max: 2000 }).map((n): J => ({ raw: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}` })),
  fc.integer({ min: 1, max: 70_000 }).map((n): J => 'x'.repeat(n)),
  fc.array(doiForms(), { minLength: 0, maxLength: 3 }),
);

/** One change to an object: a member added last (a repeated key replaces the earlier value) or one removed. */
export type Mutation = { op: 'set'; key: string; value: J; at: number } | { op: 'drop'; key: string; at: number };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), key: keyArb, value: valueArb, at: fc.nat() }),
  fc.record({ op: fc.constant('drop' as const), key: keyArb, at: fc.nat() }),
);

/**
 * Applies a mutation to the `at`-th object of `targets` (nothing when there are none). A value set is a copy:
 * the generator hands out some objects more than once (constantFrom's `{}`, a mutation replayed while shrinking),
 * and the same object set twice, the second time into itself, made a cycle that no serializer can write.
 */
export function mutate(targets: Obj[], m: Mutation): void {
  if (targets.length === 0) return;
  const t = targets[m.at % targets.length]!;
  if (m.op === 'set') t.obj.push([m.key, clone(m.value)]);
  else t.obj = t.obj.filter(([k]) => k !== m.key);
}

/** Every object in a value, depth first (for mutations that reach into nested objects). */
export function objectsIn(v: J, out: Obj[] = []): Obj[] {
  if (Array.isArray(v)) for (const x of v) objectsIn(x, out);
  else if (v !== null && typeof v === 'object' && 'obj' in v) {
    out.push(v);
    for (const [, x] of v.obj) objectsIn(x, out);
  }
  return out;
}

/** A deep copy (mutations change objects in place). */
export function clone(v: J): J {
  if (Array.isArray(v)) return v.map(clone);
  if (v !== null && typeof v === 'object' && 'obj' in v) return obj(v.obj.map(([k, x]) => [k, clone(x)]));
  return v;
}
