import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { doiKey, readDoiInput } from '../../doi/index.ts';
import { MetadataEntry } from '../api/index.ts';
import { exactTitle, familyName, normaliseTitle } from './titles.ts';

/**
 * Which of Crossref's works an entry by metadata means (docs/interface.md, "Entries by metadata"), decided here
 * alone: what a candidate must agree with, and which one of several is "the latest published version".
 */

/** An entry's metadata members, once metadataProblem found them well typed. */
export type MetadataQuery = Static<typeof MetadataEntry>;

const checkMetadata = TypeCompiler.Compile(MetadataEntry);

/** A `/works` item, as far as the match reads it (Crossref's field names). */
export interface CrossrefItem {
  DOI?: unknown;
  title?: unknown;
  'container-title'?: unknown;
  author?: unknown;
  issued?: unknown;
  type?: unknown;
}

/** The comparable forms of a query, made once per entry. */
export interface QueryForms {
  title: string | undefined;
  exact: boolean;
  journal: string | undefined;
  families: string[];
  year: number | undefined;
  preprintKey: string | undefined;
}

/**
 * Why an entry by metadata cannot be looked up (its entry answers 400 with this), or undefined: its members of
 * their types (MetadataEntry), and a title with something to match or a preprintDoi that is a DOI.
 */
export function metadataProblem(entry: object): string | undefined {
  const fault = checkMetadata.Errors(entry).First();
  if (fault) return `${fault.path.slice(1).replaceAll('/', '.')}: ${fault.message.toLowerCase()}`;
  const q = entry as MetadataQuery;
  if (q.preprintDoi !== undefined) {
    const input = readDoiInput(q.preprintDoi);
    if (input.problem !== undefined) return `preprintDoi: ${input.problem}`;
  }
  if (q.title !== undefined && normaliseTitle(q.title) === '')
    return 'title: has no letter or digit to match a title by';
  if (q.title === undefined && q.preprintDoi === undefined)
    return 'an entry without doi is looked up by its metadata, and needs a title or a preprintDoi';
  return undefined;
}

export function queryForms(q: MetadataQuery): QueryForms {
  return {
    title: q.title === undefined ? undefined : q.exactTitleMatch ? exactTitle(q.title) : normaliseTitle(q.title),
    exact: q.exactTitleMatch === true,
    journal: q.journal === undefined ? undefined : normaliseTitle(q.journal),
    families: [...new Set((q.authors ?? []).map(familyName).filter((f) => f !== ''))].sort(),
    year: q.year,
    preprintKey: q.preprintDoi === undefined ? undefined : preprintKeyOf(q.preprintDoi),
  };
}

/** The lookup cache's key: two entries that mean the same search share it. */
export function cacheKeyOf(f: QueryForms): string {
  return JSON.stringify([f.title, f.exact ? 1 : 0, f.journal, f.families, f.year, f.preprintKey]);
}

/**
 * Whether a candidate of a bibliographic search is the work asked for. Following GetFTR's rules of a metadata
 * match: its title matches (normalised, or exactly with exactTitleMatch); its journal, when one was given; one of
 * the authors given, by family name; it was published in the year given or later (a preprint of 2020 may be
 * published in 2021); it is not the preprint given; and it is a published version (not `posted-content`, which
 * is how Crossref types preprints).
 */
export function accepts(f: QueryForms, item: CrossrefItem): boolean {
  if (typeof item.DOI !== 'string' || item.type === 'posted-content') return false;
  if (f.preprintKey !== undefined && doiKey(item.DOI) === f.preprintKey) return false;
  const titles = strings(item.title);
  const form = f.exact ? exactTitle : normaliseTitle;
  if (f.title === undefined || !titles.some((t) => form(t) === f.title)) return false;
  if (f.year !== undefined && (issuedOf(item)[0] ?? 0) < f.year) return false;
  if (f.journal !== undefined && !strings(item['container-title']).some((j) => normaliseTitle(j) === f.journal))
    return false;
  if (f.families.length > 0) {
    const theirs = authorsOf(item);
    if (!f.families.some((name) => theirs.has(name))) return false;
  }
  return true;
}

/**
 * The latest published version among accepted candidates: the latest `issued` date (year, then month, then day;
 * a part Crossref does not give counts as earlier than any it does), and on a tie the smallest DOI key, so every
 * replica, and every ordering of Crossref's results, gives the same answer.
 */
export function latest(items: readonly CrossrefItem[]): string | undefined {
  let best: CrossrefItem | undefined;
  for (const item of items) if (!best || later(item, best)) best = item;
  return best?.DOI as string | undefined;
}

function later(a: CrossrefItem, b: CrossrefItem): boolean {
  const da = issuedOf(a);
  const db = issuedOf(b);
  for (let i = 0; i < 3; i++) {
    const x = da[i] ?? 0;
    const y = db[i] ?? 0;
    if (x !== y) return x > y;
  }
  return doiKey(a.DOI as string) < doiKey(b.DOI as string);
}

/** `issued`'s date parts, `[year, month?, day?]` (empty when Crossref gives none). */
function issuedOf(item: CrossrefItem): number[] {
  const parts = (item.issued as { 'date-parts'?: unknown } | undefined)?.['date-parts'];
  const first = Array.isArray(parts) ? parts[0] : undefined;
  return Array.isArray(first) ? first.filter((n): n is number => typeof n === 'number') : [];
}

/** The normalised family names (or an organisation's name) of a work's authors. */
function authorsOf(item: CrossrefItem): Set<string> {
  const out = new Set<string>();
  if (!Array.isArray(item.author)) return out;
  for (const a of item.author as { family?: unknown; name?: unknown }[]) {
    if (typeof a?.family === 'string') out.add(normaliseTitle(a.family));
    if (typeof a?.name === 'string') out.add(familyName(a.name));
  }
  return out;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : typeof v === 'string' ? [v] : [];
}

/** The preprint's DOI key, whatever form it was sent in (bare, doi:, https://doi.org/): the cache and the match agree. */
function preprintKeyOf(sent: string): string {
  const input = readDoiInput(sent);
  return 'key' in input ? input.key : doiKey(sent);
}
