import { itemJson } from './crossref-works.ts';

/**
 * A loopback server that plays the Crossref REST API's `GET /works` list route and `GET /works/{doi}`, for the
 * harvester's and the metadata lookup's tests and the benchmarks. What it copies from the real API (sources in
 * test/fixtures/PROVENANCE.md):
 * - the field queries (`query.bibliographic`, `query.container-title`, `query.author`), ranked roughly (ranked());
 *   the `from-pub-date`, `until-pub-date` and `doi` filters; a single work's reply (`message-type: work`), and 404
 *   "Resource not found." for a DOI it does not hold;
 * - the `work-list` reply (`facets`, `next-cursor`, `total-results`, `items`, `items-per-page`, `query`); a walk
 *   ends with a page whose `items` is empty; `indexed` is a Crossref date object;
 * - `filter=name:value,...`: different names AND together, the same name repeated ORs (as Crossref documents);
 * - 400 `validation-failure` bodies worded as Crossref's own (`filter-not-available`, `integer-not-valid`);
 * - `x-rate-limit-limit`, `x-rate-limit-interval` (`1s`) and `x-concurrency-limit` on every reply, enforced with
 *   429 + `Retry-After: 1`;
 * - deep paging as today's Elasticsearch-backed API does it: ONE cursor per walk, returned unchanged on every
 *   page, with the position held by the server. Every page served (a truncated one too) moves the walk on, so a
 *   client that retries the same cursor after a lost page gets the NEXT page, not the lost one. Cursors expire
 *   after `cursorTtlMs` unused (Crossref: about 5 minutes) or when a test injects `expire-cursors`.
 * `cursors: 'stateless'` gives instead a new cursor per page naming its position (retrying one repeats its page).
 */

/** A work as the tests hold it; rendered as a Crossref list item (with `indexed` as a date object). */
export interface FakeWork {
  DOI: string;
  /** YYYY-MM-DD: the day Crossref last indexed it */
  indexed: string;
  'update-to'?: unknown[];
  'updated-by'?: unknown[];
  [field: string]: unknown;
}
/** The limits the server advertises in its headers and enforces. */
export interface RateLimit {
  limit: number;
  intervalSeconds: number;
  concurrency: number;
}
/** A fault for the next calls to `/works`. */
export type Fault =
  /** the next `times` /works calls get this status (429/503/500), with Retry-After when given */
  | { kind: 'status'; status: number; retryAfter?: string; body?: string; times: number }
  /** every cursor handed out so far is no longer valid: a call with one gets 400 (see EXPIRED_CURSOR_STATUS) */
  | { kind: 'expire-cursors' }
  /** the next `times` page replies are cut in the middle of the JSON (status 200, body ends early) */
  | { kind: 'truncate'; times: number }
  /** the next `times` /works calls wait this long before being answered */
  | { kind: 'stall'; ms: number; times: number };
/** One call as the server saw it. */
export interface CallRecord {
  at: number /* performance.now() */;
  path: string;
  params: URLSearchParams;
  status: number;
  /** the request headers */
  headers: Headers;
}
/** A running fake. */
export interface CrossrefApi {
  /** base URL, e.g. http://127.0.0.1:PORT (the client calls `${url}/works?...`) */
  url: string;
  /** mutable: tests push, replace or edit works between harvests (a walk pages a snapshot taken at cursor=*) */
  works: FakeWork[];
  /** every call, in arrival order (429s and faults included) */
  calls: CallRecord[];
  /** queues a fault */
  inject(fault: Fault): void;
  /** drops every fault still queued */
  clearFaults(): void;
  /** the most /works calls ever being answered at the same time */
  maxInFlight: number;
  /** stops the server */
  stop(): Promise<void>;
}
/** Options of startCrossrefApi. */
export interface CrossrefApiOptions {
  /** the works to serve (kept as `api.works`, the same array) */
  works?: FakeWork[];
  /** default 1000 calls / 1 s, 50 at once */
  rateLimit?: RateLimit;
  /** the largest `rows` (default 1000, as Crossref) */
  maxRows?: number;
  /** how long an unused cursor lives (default 300_000: Crossref's five minutes) */
  cursorTtlMs?: number;
  /** every call is answered after this many ms (a distant Crossref, for the benchmark) */
  delayMs?: number;
  /** 'scroll' (default): one cursor per walk, position on the server; 'stateless': a cursor per page */
  cursors?: 'scroll' | 'stateless';
  /** how an expired or unknown cursor is answered: 400 naming the cursor (default), or 404 "Resource not found." */
  expiredCursor?: 'named' | 'not-found';
}

/** The status an expired or unknown cursor gets. Undocumented by Crossref; see PROVENANCE.md for what is known. */
export const EXPIRED_CURSOR_STATUS = 400;
/** The filter names the fake knows (any other answers 400 filter-not-available). */
export const FILTERS = [
  'from-index-date',
  'until-index-date',
  'is-update',
  'has-update',
  'from-pub-date',
  'until-pub-date',
  'doi',
] as const;

export { realWorks, syntheticWorks } from './crossref-works.ts';

interface Walk {
  items: FakeWork[];
  select: string[] | null;
  pos: number;
  usedAt: number;
  live: boolean;
}
type Reply = { status: number; body: string; headers?: Record<string, string> };

const failure = (type: string, value: unknown, message: string): Reply => ({
  status: 400,
  body: JSON.stringify({ status: 'failed', 'message-type': 'validation-failure', message: [{ type, value, message }] }),
});
const BOOLEAN: Record<string, boolean> = { true: true, t: true, '1': true, false: false, f: false, '0': false };
const DAY = /^\d{4}(-\d{2}(-\d{2})?)?$/;

/** Parses `filter`; returns a predicate over works or a 400 reply. */
function parseFilter(raw: string | null): ((w: FakeWork) => boolean) | Reply {
  const groups = new Map<string, ((w: FakeWork) => boolean)[]>();
  for (const part of raw ? raw.split(',') : []) {
    const colon = part.indexOf(':');
    const name = colon < 0 ? part : part.slice(0, colon);
    const value = colon < 0 ? '' : part.slice(colon + 1);
    let test: (w: FakeWork) => boolean;
    if (name === 'from-index-date' || name === 'until-index-date') {
      if (!DAY.test(value))
        return failure(
          'date-not-valid',
          value,
          `Date specified as ${value} but must be of the form: yyyy or yyyy-mm or yyyy-mm-dd`,
        );
      const from = name === 'from-index-date';
      const bound = from ? value + '-01-01'.slice(value.length - 4) : value + '-12-31'.slice(value.length - 4);
      test = from ? (w) => w.indexed >= bound : (w) => w.indexed <= bound;
    } else if (name === 'from-pub-date' || name === 'until-pub-date') {
      if (!DAY.test(value))
        return failure(
          'date-not-valid',
          value,
          `Date specified as ${value} but must be of the form: yyyy or yyyy-mm or yyyy-mm-dd`,
        );
      // the published date as Crossref compares it: `issued`, to the precision the work has it
      const from = name === 'from-pub-date';
      test = (w) => {
        const day = issuedDay(w);
        if (day === undefined) return false;
        const cut = day.slice(0, value.length);
        return from ? cut >= value : cut <= value;
      };
    } else if (name === 'doi') {
      test = (w) => w.DOI.toLowerCase() === value.toLowerCase();
    } else if (name === 'is-update' || name === 'has-update') {
      if (!(value in BOOLEAN))
        return failure(
          'boolean-not-valid',
          value,
          `Boolean specified as ${value} but must be one of: t, true, 1, f, false, 0`,
        );
      const field = name === 'is-update' ? 'update-to' : 'updated-by';
      const want = BOOLEAN[value];
      test = (w) => (Array.isArray(w[field]) && (w[field] as unknown[]).length > 0) === want;
    } else {
      return failure(
        'filter-not-available',
        name,
        `Filter ${name} specified but there is no such filter for this route. Valid filters for this route are: ${FILTERS.join(', ')}`,
      );
    }
    groups.set(name, [...(groups.get(name) ?? []), test]);
  }
  const all = [...groups.values()];
  return (w) => all.every((tests) => tests.some((t) => t(w)));
}

/** `issued` as YYYY[-MM[-DD]], or undefined. */
function issuedDay(w: FakeWork): string | undefined {
  const parts = (w.issued as { 'date-parts'?: number[][] } | undefined)?.['date-parts']?.[0];
  if (!parts?.length) return undefined;
  return parts.map((n, i) => (i === 0 ? String(n) : String(n).padStart(2, '0'))).join('-');
}

/** Lower-case words of a text, markup aside: how the fake's search ranks. */
function wordsOf(text: string): string[] {
  return text
    .replace(/<[^>]*>/g, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

const QUERY_FIELDS = ['query.bibliographic', 'query.container-title', 'query.author'] as const;

/**
 * A field query ranked as a search engine would, roughly: each work scores the query's words it holds (title and
 * journal for `query.bibliographic`, the journal for `query.container-title`, family names for `query.author`);
 * works scoring nothing are left out, the rest come highest first. Crossref's own ranking is fuzzier and returns
 * loose matches too: the client must check what it takes, as it does here.
 */
function ranked(works: FakeWork[], params: URLSearchParams): FakeWork[] | undefined {
  if (!QUERY_FIELDS.some((f) => params.has(f))) return undefined;
  const scored: { w: FakeWork; score: number }[] = [];
  for (const w of works) {
    const texts: Record<(typeof QUERY_FIELDS)[number], string> = {
      'query.bibliographic': [...((w.title as string[]) ?? []), ...((w['container-title'] as string[]) ?? [])].join(
        ' ',
      ),
      'query.container-title': ((w['container-title'] as string[]) ?? []).join(' '),
      'query.author': ((w.author as { family?: string }[]) ?? []).map((a) => a.family ?? '').join(' '),
    };
    let score = 0;
    for (const f of QUERY_FIELDS) {
      const q = params.get(f);
      if (q === null) continue;
      const have = new Set(wordsOf(texts[f]));
      for (const word of wordsOf(q)) if (have.has(word)) score++;
    }
    if (score > 0) scored.push({ w, score });
  }
  return scored.sort((a, b) => b.score - a.score || (a.w.DOI < b.w.DOI ? -1 : 1)).map((x) => x.w);
}

/** Starts the fake on 127.0.0.1, on a free port. */
export async function startCrossrefApi(opts: CrossrefApiOptions = {}): Promise<CrossrefApi> {
  const rate = opts.rateLimit ?? { limit: 1000, intervalSeconds: 1, concurrency: 50 };
  const maxRows = opts.maxRows ?? 1000;
  const ttl = opts.cursorTtlMs ?? 300_000;
  const stateless = opts.cursors === 'stateless';
  const limitHeaders = {
    'x-rate-limit-limit': String(rate.limit),
    'x-rate-limit-interval': `${rate.intervalSeconds}s`,
    'x-concurrency-limit': String(rate.concurrency),
  };
  const walks = new Map<string, Walk>();
  const admitted: number[] = [];
  let inFlight = 0;
  let walkCount = 0;

  type Timed = Exclude<Fault, { kind: 'expire-cursors' }>;
  const faults: Timed[] = [];
  const takeFault = <K extends Timed['kind']>(kind: K): Extract<Timed, { kind: K }> | undefined => {
    const i = faults.findIndex((f) => f.kind === kind);
    if (i < 0) return undefined;
    const f = faults[i];
    if (--f.times <= 0) faults.splice(i, 1);
    return f as Extract<Timed, { kind: K }>;
  };

  function page(params: URLSearchParams): Reply {
    const rowsRaw = params.get('rows');
    if (rowsRaw !== null && (!/^\d+$/.test(rowsRaw) || Number(rowsRaw) > maxRows)) {
      return failure(
        'integer-not-valid',
        rowsRaw,
        `Integer specified as ${rowsRaw} but must be a positive integer less than or equal to ${maxRows}. `,
      );
    }
    const rows = rowsRaw === null ? 20 : Number(rowsRaw);
    const cursor = params.get('cursor');
    let walk: Walk | undefined;
    let id = cursor;
    if (cursor === null || cursor === '*') {
      const keep = parseFilter(params.get('filter'));
      if (typeof keep !== 'function') return keep;
      const select = params.get('select')?.split(',').filter(Boolean) ?? null;
      const kept = api.works.filter(keep);
      const items = ranked(kept, params) ?? kept.sort((a, b) => (a.DOI < b.DOI ? -1 : a.DOI > b.DOI ? 1 : 0));
      walk = { items, select, pos: 0, usedAt: performance.now(), live: true };
      id = `DnF1ZXJ5VGhlbkZldGNo-fake-${++walkCount}`;
      for (const [old, w] of walks) if (performance.now() - w.usedAt > ttl) walks.delete(old);
      if (cursor === '*') walks.set(id, walk);
    } else {
      const [walkId, at] = stateless ? cursor.split('@') : [cursor, undefined];
      walk = walks.get(walkId);
      if (!walk?.live || performance.now() - walk.usedAt > ttl) {
        walks.delete(walkId);
        if (opts.expiredCursor === 'not-found') return { status: 404, body: 'Resource not found.' };
        const expired = failure(
          'cursor-not-valid',
          cursor,
          `Cursor ${cursor} is not valid or has expired. Start again with cursor=*.`,
        );
        return { ...expired, status: EXPIRED_CURSOR_STATUS };
      }
      if (at !== undefined) walk.pos = Number(at);
      walk.usedAt = performance.now();
      id = walkId;
    }
    const w = walk;
    const slice = w.items.slice(w.pos, w.pos + rows);
    w.pos += slice.length;
    const items = slice.map((work) => itemJson(work, w.select));
    const next = cursor === null ? '' : `"next-cursor":${JSON.stringify(stateless ? `${id}@${w.pos}` : id)},`;
    return {
      status: 200,
      body:
        `{"status":"ok","message-type":"work-list","message-version":"1.0.0","message":{"facets":{},${next}` +
        `"total-results":${w.items.length},"items":[${items.join(',')}],"items-per-page":${rows},` +
        `"query":{"start-index":0,"search-terms":null}}}`,
    };
  }

  async function works(req: Request, params: URLSearchParams): Promise<Reply> {
    const status = takeFault('status');
    if (status)
      return {
        status: status.status,
        body: status.body ?? `${status.status} (injected)`,
        headers: status.retryAfter ? { 'retry-after': status.retryAfter } : {},
      };
    const now = performance.now();
    while (admitted.length && admitted[0] <= now - rate.intervalSeconds * 1000) admitted.shift();
    if (admitted.length >= rate.limit || inFlight >= rate.concurrency) {
      return { status: 429, body: 'Too Many Requests', headers: { 'retry-after': '1' } };
    }
    admitted.push(now);
    inFlight++;
    api.maxInFlight = Math.max(api.maxInFlight, inFlight);
    try {
      const stall = takeFault('stall');
      if (stall) await Bun.sleep(stall.ms);
      if (req.signal.aborted) return { status: 499, body: '' };
      const reply = page(params);
      if (reply.status === 200 && takeFault('truncate'))
        reply.body = reply.body.slice(0, Math.floor(reply.body.length / 2));
      return reply;
    } finally {
      inFlight--;
    }
  }

  /** `GET /works/{doi}`: one work's record (`message-type: work`), or 404 "Resource not found." as Crossref. */
  async function work(doi: string): Promise<Reply> {
    const status = takeFault('status');
    if (status)
      return {
        status: status.status,
        body: status.body ?? `${status.status} (injected)`,
        headers: status.retryAfter ? { 'retry-after': status.retryAfter } : {},
      };
    const stall = takeFault('stall');
    if (stall) await Bun.sleep(stall.ms);
    const found = api.works.find((w) => w.DOI.toLowerCase() === doi.toLowerCase());
    if (!found) return { status: 404, body: 'Resource not found.' };
    return {
      status: 200,
      body: `{"status":"ok","message-type":"work","message-version":"1.0.0","message":${itemJson(found, null)}}`,
    };
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const call: CallRecord = {
        at: performance.now(),
        path: url.pathname,
        params: url.searchParams,
        status: 0,
        headers: req.headers,
      };
      api.calls.push(call);
      if (opts.delayMs) await Bun.sleep(opts.delayMs);
      const single = /^\/(?:v1\/)?works\/(.+)$/.exec(url.pathname);
      const reply: Reply =
        req.method !== 'GET'
          ? { status: 404, body: 'Resource not found.' }
          : url.pathname === '/works' || url.pathname === '/v1/works'
            ? await works(req, url.searchParams)
            : single
              ? await work(decodeURIComponent(single[1]!))
              : { status: 404, body: 'Resource not found.' };
      call.status = reply.status;
      const json = reply.body.startsWith('{') || reply.status === 200;
      const pool = url.searchParams.has('mailto') ? 'polite-array' : 'public-array';
      return new Response(reply.body, {
        status: reply.status,
        headers: {
          'content-type': json ? 'application/json' : 'text/plain',
          'x-api-pool': pool,
          ...limitHeaders,
          ...reply.headers,
        },
      });
    },
  });

  for (const work of opts.works ?? []) itemJson(work, null); // rendered now, so a timed harvest does not pay for it
  const api: CrossrefApi = {
    url: `http://127.0.0.1:${server.port}`,
    works: opts.works ?? [],
    calls: [],
    maxInFlight: 0,
    inject(fault) {
      if (fault.kind === 'expire-cursors') {
        for (const walk of walks.values()) walk.live = false;
        walks.clear();
      } else faults.push({ ...fault });
    },
    clearFaults() {
      faults.length = 0;
    },
    async stop() {
      await server.stop(true);
    },
  };
  return api;
}
