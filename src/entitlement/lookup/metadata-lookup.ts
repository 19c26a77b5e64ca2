import { boundedText, type Fault, fault } from '../../base/index.ts';
import type { MetadataLookupSettings } from '../../config/index.ts';
import { crossrefHeaders, crossrefUserAgent, parseRetryAfter, RateGate } from '../../crossref/index.ts';
import { doiKey, readDoiInput } from '../../doi/index.ts';
import { LookupCache } from './lookup-cache.ts';
import { accepts, type CrossrefItem, cacheKeyOf, latest, type MetadataQuery, queryForms } from './match.ts';

/**
 * Entries by metadata resolved to a DOI through Crossref's REST API (docs/design.md, "Entries by metadata"):
 * a preprint followed to its published version, else a bibliographic search. Polite as the harvest is (the
 * shared RateGate and headers: mailto, Plus token, the advertised rate and concurrency, a 429's Retry-After), and
 * bounded: every call ends by its request's deadline, and no more than `concurrency` are in flight.
 */

/** What one entry's lookup came to. */
export type LookupOutcome =
  | { kind: 'found'; doi: string }
  /** Crossref was asked and has no published version that matches */
  | { kind: 'not_found' }
  /** Crossref could not be asked in time, or failed: not "nothing found" */
  | { kind: 'failed'; fault: Fault<'LOOKUP_TIMEOUT' | 'LOOKUP_UNAVAILABLE'> };

/** Lookups by outcome since start, for /metrics (`cached`: answered from the cache, no call). */
export const LOOKUP_OUTCOMES = ['found', 'not_found', 'error', 'timeout', 'cached'] as const;
export type LookupCount = (typeof LOOKUP_OUTCOMES)[number];

/** candidates asked of a bibliographic search: the match is strict, so the first page holds it or nothing does */
const SEARCH_ROWS = 20;
const SEARCH_SELECT = 'DOI,title,container-title,author,issued,type';
/** the most published versions of one preprint whose dates are compared (Crossref lists one, rarely two) */
const MAX_VERSIONS = 20;
/** a reply's bound: a page of 20 selected items is a few kilobytes */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;

type CallResult = { status: 200; message: Record<string, unknown> } | { status: 404 } | { fault: LookupFailure };
type LookupFailure = Fault<'LOOKUP_TIMEOUT' | 'LOOKUP_UNAVAILABLE'>;

export class MetadataLookup {
  readonly gate: RateGate;
  readonly cache: LookupCache;
  readonly counts = new Map<LookupCount, number>(LOOKUP_OUTCOMES.map((o) => [o, 0]));
  /** calls made to Crossref since start (every try, 429s included) */
  calls = 0;
  private readonly headers: Record<string, string>;

  constructor(
    readonly settings: MetadataLookupSettings,
    product: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.gate = new RateGate(settings.concurrency);
    this.cache = new LookupCache(settings.cacheEntries);
    this.headers = crossrefHeaders(crossrefUserAgent(product, settings.mailto), settings.plusToken);
  }

  /**
   * Resolves a request's metadata entries together, by `deadline` (a performance.now() time): one outcome per
   * query, in order. Entries that mean the same search are one lookup.
   */
  async resolve(queries: readonly MetadataQuery[], deadline: number): Promise<LookupOutcome[]> {
    const byKey = new Map<string, Promise<LookupOutcome>>();
    return Promise.all(
      queries.map((q) => {
        const forms = queryForms(q);
        const key = cacheKeyOf(forms);
        const cached = this.cache.get(key);
        if (cached !== undefined) {
          this.count('cached');
          return { kind: 'found', doi: cached } as const;
        }
        let one = byKey.get(key);
        if (!one) {
          one = this.lookUp(q, forms, deadline).then((outcome) => {
            if (outcome.kind === 'found') this.cache.set(key, outcome.doi);
            this.count(
              outcome.kind === 'failed'
                ? outcome.fault.code === 'LOOKUP_TIMEOUT'
                  ? 'timeout'
                  : 'error'
                : outcome.kind,
            );
            return outcome;
          });
          byKey.set(key, one);
        }
        return one;
      }),
    );
  }

  private count(outcome: LookupCount): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  /** The preprint's published version when Crossref links one; otherwise (or without a preprint) the search. */
  private async lookUp(
    q: MetadataQuery,
    forms: ReturnType<typeof queryForms>,
    deadline: number,
  ): Promise<LookupOutcome> {
    if (q.preprintDoi !== undefined) {
      const published = await this.publishedVersionOf(q.preprintDoi, deadline);
      if (published.kind !== 'not_found' || q.title === undefined) return published;
    }
    const params = new URLSearchParams({ 'query.bibliographic': q.title! });
    if (q.journal !== undefined) params.set('query.container-title', q.journal);
    if (q.authors?.length) params.set('query.author', q.authors.join(' '));
    if (q.year !== undefined) params.set('filter', `from-pub-date:${q.year}`);
    params.set('rows', String(SEARCH_ROWS));
    params.set('select', SEARCH_SELECT);
    const r = await this.call('/works', params, deadline);
    if ('fault' in r) return { kind: 'failed', fault: r.fault };
    if (r.status === 404) return { kind: 'not_found' };
    const found = latest(itemsOf(r.message).filter((item) => accepts(forms, item)));
    return found === undefined ? { kind: 'not_found' } : { kind: 'found', doi: found };
  }

  /**
   * The work a preprint's `relation.is-preprint-of` names; of several, the latest published (their `issued`
   * dates read in one more call). A preprint Crossref does not know, or that names none: not found.
   */
  private async publishedVersionOf(preprintDoi: string, deadline: number): Promise<LookupOutcome> {
    const input = readDoiInput(preprintDoi);
    if (input.problem !== undefined) return { kind: 'not_found' }; // refused before any lookup (metadataProblem)
    const r = await this.call(`/works/${encodeURIComponent(input.bare)}`, new URLSearchParams(), deadline);
    if ('fault' in r) return { kind: 'failed', fault: r.fault };
    if (r.status === 404) return { kind: 'not_found' };
    const relation = r.message.relation as Record<string, unknown> | undefined;
    const linked = Array.isArray(relation?.['is-preprint-of']) ? (relation['is-preprint-of'] as unknown[]) : [];
    const dois = [
      ...new Set(
        linked
          .map((x) => x as { 'id-type'?: unknown; id?: unknown })
          .filter(
            (x) => x?.['id-type'] === 'doi' && typeof x.id === 'string' && readDoiInput(x.id).problem === undefined,
          )
          .map((x) => (readDoiInput(x.id as string) as { bare: string }).bare),
      ),
    ].slice(0, MAX_VERSIONS);
    if (dois.length <= 1) return dois[0] === undefined ? { kind: 'not_found' } : { kind: 'found', doi: dois[0] };
    const params = new URLSearchParams({
      filter: dois.map((d) => `doi:${d}`).join(','),
      rows: String(dois.length),
      select: 'DOI,issued',
    });
    const versions = await this.call('/works', params, deadline);
    if ('fault' in versions) return { kind: 'failed', fault: versions.fault };
    const dated = versions.status === 200 ? itemsOf(versions.message) : [];
    // a version Crossref did not list back keeps its place, undated (earlier than any dated one)
    const known = new Set(dated.map((i) => (typeof i.DOI === 'string' ? doiKey(i.DOI) : '')));
    const all = [...dated, ...dois.filter((d) => !known.has(doiKey(d))).map((d) => ({ DOI: d }))];
    const found = latest(all.filter((i) => typeof i.DOI === 'string'));
    return found === undefined ? { kind: 'not_found' } : { kind: 'found', doi: found };
  }

  /**
   * One GET, within the deadline: through the gate (the advertised rate and concurrency, our cap, a 429's pause),
   * tried again after a 429 when its Retry-After ends before the deadline. 404 is an answer ("no such work").
   */
  private async call(path: string, params: URLSearchParams, deadline: number): Promise<CallResult> {
    params.set('mailto', this.settings.mailto);
    const url = `${this.settings.url}${path}?${params}`;
    for (;;) {
      const release = await this.gate.enter(deadline);
      if (!release) return { fault: this.notStarted(deadline) };
      let res: Response;
      let text: string | undefined;
      try {
        this.calls++;
        // a redirect is not followed: fetch would take the Plus token (a header of ours) to wherever it points
        res = await this.fetchImpl(url, {
          headers: this.headers,
          redirect: 'manual',
          signal: AbortSignal.timeout(Math.max(1, deadline - performance.now())),
        });
        this.gate.learn(res.headers);
        // paused before the body is read: a call waiting for a slot this frees must not start meanwhile
        if (res.status === 429) this.gate.pauseFor(pauseAfter429(res.headers.get('retry-after')));
        text = await boundedText(res, MAX_REPLY_BYTES);
      } catch (e) {
        const timedOut = (e as Error).name === 'TimeoutError' || performance.now() >= deadline;
        return { fault: timedOut ? timeoutFault() : unavailable(`${this.settings.url}: ${(e as Error).message}`) };
      } finally {
        release();
      }
      if (res.status === 429) continue; // the gate holds every start until the pause ends, or gives up at the deadline
      if (res.status === 404) return { status: 404 };
      if (res.status !== 200) return { fault: unavailable(`Crossref answered HTTP ${res.status}`) };
      if (text === undefined) return { fault: unavailable('Crossref answered more than 4 MiB') };
      const message = messageOf(text);
      if (!message) return { fault: unavailable('Crossref answered something other than a work or a work list') };
      return { status: 200, message };
    }
  }

  /** Why a call could not start by the deadline: Crossref's own pause (a 429), or our queue. */
  private notStarted(deadline: number): LookupFailure {
    if (this.gate.pausedUntil >= deadline)
      return unavailable("Crossref asked us to wait (HTTP 429, Retry-After) past this request's deadline");
    return timeoutFault();
  }
}

/**
 * How long a 429 stops every lookup: its Retry-After, 1 s without one, and never under 250 ms, so that a server
 * answering `Retry-After: 0` again and again is not called in a tight loop until the deadline.
 */
function pauseAfter429(retryAfter: string | null): number {
  return Math.max(MIN_PAUSE_MS, parseRetryAfter(retryAfter) ?? 1000);
}
const MIN_PAUSE_MS = 250;

function timeoutFault(): Fault<'LOOKUP_TIMEOUT'> {
  return fault('LOOKUP_TIMEOUT', 'the metadata lookup at Crossref did not finish within its time-out');
}

function unavailable(why: string): Fault<'LOOKUP_UNAVAILABLE'> {
  return fault('LOOKUP_UNAVAILABLE', `the metadata lookup could not be made: ${why}`);
}

/** The `message` object of a Crossref reply, or undefined. */
function messageOf(text: string): Record<string, unknown> | undefined {
  try {
    const m = (JSON.parse(text) as { message?: unknown } | null)?.message;
    return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function itemsOf(message: Record<string, unknown>): CrossrefItem[] {
  return Array.isArray(message.items)
    ? (message.items as CrossrefItem[]).filter((i) => typeof i === 'object' && i !== null && !Array.isArray(i))
    : [];
}
