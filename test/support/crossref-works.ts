import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeWork } from './crossref-api.ts';

/**
 * The works side of the fake Crossref REST API (test/support/crossref-api.ts): the real fixture records, a
 * generator of synthetic works shaped like them, and the cached rendering of a work as a `/works` list item.
 */

/** Where the real Crossref records live (see test/fixtures/PROVENANCE.md). */
export const CROSSREF_FIXTURES = join(import.meta.dir, '..', 'fixtures', 'crossref');
/** The retracted Lancet article: `updated-by` from retraction-watch (with record-id) and from the publisher. */
export const RETRACTED_WORK_FILE = join(CROSSREF_FIXTURES, '10.1016_s0140-6736_20_31180-6.json');
/** Its retraction notice: `update-to` pointing at the article (retraction-watch record 23529). */
export const NOTICE_WORK_FILE = join(CROSSREF_FIXTURES, '10.1016_s0140-6736_20_31324-6.json');

type Json = Record<string, unknown>;
interface DateParts {
  'date-parts': number[][];
}

/** The `message` of a saved single-work reply, as the REST API sent it. */
export function readFixtureMessage(file: string): Json {
  return (JSON.parse(readFileSync(file, 'utf8')) as { message: Json }).message;
}

/** YYYY-MM-DD from a Crossref date object ({"date-parts":[[y,m,d]],...}). */
export function dayOf(date: DateParts): string {
  const [y, m = 1, d = 1] = date['date-parts'][0];
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The two real records as FakeWorks (every field as found; `indexed` held as its YYYY-MM-DD day). */
export function realWorks(): FakeWork[] {
  return [RETRACTED_WORK_FILE, NOTICE_WORK_FILE].map((file) => {
    const message = readFixtureMessage(file);
    return { ...message, DOI: message.DOI as string, indexed: dayOf(message.indexed as DateParts) };
  });
}

/** A Crossref date object for a day, in the form the REST API gives `indexed` (midnight UTC). */
export function crossrefDate(day: string): Json {
  const [y, m, d] = day.split('-').map(Number);
  return {
    'date-parts': [[y, m, d]],
    'date-time': `${day}T00:00:00Z`,
    timestamp: Date.parse(`${day}T00:00:00Z`),
    version: '4.0.1',
  };
}

const UPDATE_KINDS = [
  ['retraction', 'Retraction'],
  ['correction', 'Correction'],
  ['expression_of_concern', 'Expression of concern'],
  ['retraction', 'Retraction'],
] as const;

/** mulberry32: a small seeded PRNG, so synthetic sets are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * n synthetic works in the real retracted record's shape (its bibliographic fields, without the long reference,
 * link, licence and assertion lists): even i is a notice with `update-to` → 10.5555/harvest.<i+1>; odd i is that
 * work, with `updated-by` ← the notice (the same retraction-watch record-id). `indexed` days are drawn from `days`.
 */
export function syntheticWorks(n: number, opts: { days?: string[]; seed?: number } = {}): FakeWork[] {
  const days = opts.days ?? ['2024-05-01', '2024-05-02', '2024-05-03'];
  const random = prng(opts.seed ?? 1);
  const {
    reference,
    link,
    license,
    assertion,
    'content-domain': _cd,
    'update-to': _ut,
    'updated-by': _ub,
    relation,
    ...base
  } = readFixtureMessage(RETRACTED_WORK_FILE);
  const out: FakeWork[] = [];
  for (let i = 0; i < n; i++) {
    const pair = i - (i % 2);
    const [type, label] = UPDATE_KINDS[(pair / 2) % UPDATE_KINDS.length];
    const noticeDoi = `10.5555/harvest.${pair}`;
    const workDoi = `10.5555/harvest.${pair + 1}`;
    const entry = (doi: string) => ({
      DOI: doi,
      type,
      label,
      source: 'retraction-watch',
      updated: crossrefDate(days[pair % days.length]),
      'record-id': String(100000 + pair / 2),
    });
    const doi = `10.5555/harvest.${i}`;
    const work: FakeWork = {
      ...base,
      DOI: doi,
      URL: `https://doi.org/${doi}`,
      prefix: '10.5555',
      title: [i % 2 === 0 ? `${label}: synthetic notice ${i}` : `Synthetic work ${i}`],
      indexed: days[Math.floor(random() * days.length)],
    };
    if (i % 2 === 0) work['update-to'] = [entry(workDoi)];
    else work['updated-by'] = [entry(noticeDoi)];
    out.push(work);
  }
  return out;
}

const dates = new Map<string, Json>();
/** The rendered `indexed` of a day: one object per day, reused. */
function indexedDate(day: string): Json {
  let date = dates.get(day);
  if (!date) dates.set(day, (date = crossrefDate(day)));
  return date;
}

/** A work's JSON as a list item: `indexed` rendered as a Crossref date, and only `select`ed fields when given. */
function render(work: FakeWork, select: readonly string[] | null): string {
  const indexed = typeof work.indexed === 'string' ? indexedDate(work.indexed) : work.indexed;
  if (!select) return JSON.stringify({ ...work, indexed });
  const out: Record<string, unknown> = {};
  for (const key of select) if (key in work) out[key] = key === 'indexed' ? indexed : work[key];
  return JSON.stringify(out);
}

/** What a work looked like when rendered: its top-level keys, their values, and the lengths of array values. */
interface Cached {
  stamp: unknown[];
  full?: string;
  bySelect?: Map<string, string>;
}
const cache = new WeakMap<FakeWork, Cached>();

function stampOf(work: FakeWork): unknown[] {
  const stamp: unknown[] = [];
  for (const key in work) {
    const value = work[key];
    stamp.push(key, value, Array.isArray(value) ? value.length : -1);
  }
  return stamp;
}

function unchanged(work: FakeWork, stamp: unknown[]): boolean {
  let i = 0;
  for (const key in work) {
    const value = work[key];
    if (stamp[i] !== key || stamp[i + 1] !== value || stamp[i + 2] !== (Array.isArray(value) ? value.length : -1))
      return false;
    i += 3;
  }
  return i === stamp.length;
}

/**
 * The list-item JSON of a work, rendered once and reused while the work is unchanged. A change is seen when a
 * top-level field is assigned, added or removed, or an array field changes length; an edit deeper inside an
 * existing value (say, `w['updated-by'][0].type = ...`) is not: assign a new value to the field instead.
 */
export function itemJson(work: FakeWork, select: readonly string[] | null): string {
  let c = cache.get(work);
  if (!c || !unchanged(work, c.stamp)) cache.set(work, (c = { stamp: stampOf(work) }));
  if (!select) return (c.full ??= render(work, null));
  const key = select.join(',');
  c.bySelect ??= new Map();
  let json = c.bySelect.get(key);
  if (json === undefined) c.bySelect.set(key, (json = render(work, select)));
  return json;
}
