import { type Fault, fault } from '../../base/index.ts';
import { crossrefHeaders, parseRetryAfter, RateGate } from '../../crossref/index.ts';
import type { CrossrefWork } from '../import/index.ts';

/**
 * Calls to the Crossref REST API's `/works`, politely (docs/design.md, "Harvesting Crossref"): `mailto` in every
 * query and a User-Agent naming the service and the contact; the rate the replies advertise is kept (RateGate);
 * 429, 5xx, cut-off replies and network errors are tried again with growing, jittered waits, at least as long
 * as `Retry-After` asks.
 */

/** One page of a cursor walk. */
export interface WorksPage {
  items: CrossrefWork[];
  nextCursor: string | undefined;
  /** how many works the whole walk holds (the same on every page of one walk) */
  totalResults: number;
}

export interface WorksQuery {
  filter: string;
  select: string;
  rows: number;
  cursor: string;
}

export interface ClientOptions {
  baseUrl: string;
  mailto: string;
  userAgent: string;
  plusToken?: string;
  /** tries per page before the harvest run gives up (it resumes on the next run) */
  maxTries?: number;
  /** the first wait after a failure; doubled each try, jittered, capped at maxWaitMs */
  retryBaseMs?: number;
  maxWaitMs?: number;
  timeoutMs?: number;
  /** how long a page in flight when the harvest is stopped may still take (default 5 s: a daemon stop waits for it, under systemd's stop time-out) */
  stopGraceMs?: number;
  /** told of every retry, for the log */
  onRetry?: (info: { status?: number; code: string; message: string; waitMs: number; attempt: number }) => void;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export class CrossrefClient {
  readonly gate = new RateGate();
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: ClientOptions) {
    this.fetchImpl = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? ((ms) => Bun.sleep(ms));
  }

  /**
   * One page, tried until it comes whole; a Fault once the tries are used up, or at once for an expired cursor.
   * A stop (`signal`) ends the waits and the tries at once, but lets the call in flight end, for stopGraceMs at
   * most: the server has moved its scroll cursor on for that page, so a page given up is a page lost, and the
   * window would start again when resumed.
   */
  async works(q: WorksQuery, signal?: AbortSignal): Promise<WorksPage | Fault> {
    const maxTries = this.opts.maxTries ?? 8;
    let last: { fault: Fault; retryAfterMs?: number; status?: number } | undefined;
    for (let attempt = 1; attempt <= maxTries; attempt++) {
      if (signal?.aborted) return stopped();
      if (last) {
        const waitMs = this.waitBefore(attempt, last.retryAfterMs);
        this.opts.onRetry?.({
          status: last.status,
          code: last.fault.code,
          message: last.fault.message,
          waitMs,
          attempt,
        });
        await abortableSleep(this.sleep, waitMs, signal);
        if (signal?.aborted) return stopped();
      }
      const result = await this.once(q, signal);
      if (!('fault' in result)) return result;
      if (result.fault.code === 'HARVEST_CURSOR_EXPIRED' || !result.retry) return result.fault;
      last = result;
    }
    // the last try cut off by a stop: a stop, not a failure of Crossref's
    if (signal?.aborted) return stopped();
    return { ...last!.fault, message: `${last!.fault.message} (gave up after ${maxTries} tries)` };
  }

  /** The address of one page (mailto always in the query: the polite pool). */
  pageUrl(q: WorksQuery): string {
    const params = new URLSearchParams({
      filter: q.filter,
      select: q.select,
      rows: String(q.rows),
      cursor: q.cursor,
      mailto: this.opts.mailto,
    });
    return `${this.opts.baseUrl}/works?${params}`;
  }

  private async once(
    q: WorksQuery,
    signal?: AbortSignal,
  ): Promise<WorksPage | { fault: Fault; retry: boolean; retryAfterMs?: number; status?: number }> {
    const url = this.pageUrl(q);
    const headers = crossrefHeaders(this.opts.userAgent, this.opts.plusToken);
    const release = await this.gate.enter();
    if (signal?.aborted) {
      // stopped while waiting for the gate: no new call (its page would be lost to the stop's cut)
      release();
      return { fault: stopped(), retry: false };
    }
    let res: Response;
    let text: string;
    const cut = signal && afterGrace(signal, this.opts.stopGraceMs ?? 5_000);
    try {
      const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 120_000);
      // a redirect is not followed: fetch would take the Plus token (a header of ours, not Authorization) to wherever it points
      res = await this.fetchImpl(url, {
        headers,
        redirect: 'manual',
        signal: cut ? AbortSignal.any([timeout, cut.signal]) : timeout,
      });
      this.gate.learn(res.headers);
      text = await res.text();
    } catch (e) {
      return {
        fault: fault('HARVEST_UNREACHABLE', `${this.opts.baseUrl}/works: ${(e as Error).message}`),
        retry: true,
      };
    } finally {
      cut?.dispose();
      release();
    }
    if (res.status !== 200) {
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
      const detail = errorDetail(text);
      if (q.cursor !== '*' && isExpiredCursor(res.status, text, detail))
        return {
          fault: fault(
            'HARVEST_CURSOR_EXPIRED',
            `${this.opts.baseUrl}/works: the cursor is no longer valid (HTTP ${res.status}${detail ? `: ${detail}` : ''})`,
          ),
          retry: false,
        };
      if (res.status >= 300 && res.status < 400)
        return {
          fault: fault(
            'HARVEST_HTTP_ERROR',
            `${this.opts.baseUrl}/works: HTTP ${res.status}, a redirect${redirectTarget(res)}, not followed (the Plus token would go with it): set the harvest's baseUrl to the address it should call`,
          ),
          retry: false,
          status: res.status,
        };
      const retry = res.status === 429 || res.status >= 500;
      return {
        fault: fault(
          'HARVEST_HTTP_ERROR',
          `${this.opts.baseUrl}/works: HTTP ${res.status}${detail ? `: ${detail}` : ''}`,
        ),
        retry,
        retryAfterMs,
        status: res.status,
      };
    }
    const page = parsePage(text);
    if (typeof page === 'string')
      return {
        fault: fault('HARVEST_BAD_PAGE', `${this.opts.baseUrl}/works: ${page} (${text.length} bytes)`),
        retry: true,
      };
    return page;
  }

  /** Exponential with full jitter over the upper half, never below Retry-After. */
  private waitBefore(attempt: number, retryAfterMs: number | undefined): number {
    const base = this.opts.retryBaseMs ?? 1000;
    const cap = this.opts.maxWaitMs ?? 5 * 60_000;
    const exp = Math.min(cap, base * 2 ** (attempt - 2));
    const jittered = exp / 2 + Math.random() * (exp / 2);
    return Math.max(jittered, Math.min(retryAfterMs ?? 0, cap));
  }
}

/** ` to <where>` of a redirect's location (bounded: it goes into a log line and the harvest's status), or nothing. */
function redirectTarget(res: Response): string {
  const to = res.headers.get('location');
  return to ? ` to ${JSON.stringify(to.length > 200 ? `${to.slice(0, 200)}...` : to)}` : '';
}

/** The fault of a harvest stopped (the daemon stopping, a reload of its sources): no failure, resumed by the next run. */
export function stopped(): Fault<'HARVEST_STOPPED'> {
  return fault('HARVEST_STOPPED', 'the harvest was stopped');
}

/** A signal that aborts `graceMs` after `stop` does. */
function afterGrace(stop: AbortSignal, graceMs: number): { signal: AbortSignal; dispose(): void } {
  const cut = new AbortController();
  let timer: Timer | undefined;
  const onStop = () => (timer = setTimeout(() => cut.abort(stop.reason), graceMs));
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  return {
    signal: cut.signal,
    dispose: () => {
      stop.removeEventListener('abort', onStop);
      clearTimeout(timer);
    },
  };
}

/** A wait that ends early when the harvest is stopped. */
function abortableSleep(sleep: (ms: number) => Promise<void>, ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return sleep(ms);
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done);
    void sleep(ms).then(done);
  });
}

/** A work-list reply, or why it is not one. */
export function parsePage(text: string): WorksPage | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `the reply is not whole JSON: ${(e as Error).message}`;
  }
  const message = (doc as { message?: unknown } | null)?.message as Record<string, unknown> | undefined;
  if (typeof message !== 'object' || message === null || !Array.isArray(message.items))
    return 'the reply has no message.items list';
  const next = message['next-cursor'];
  const total = message['total-results'];
  return {
    items: message.items as CrossrefWork[],
    nextCursor: typeof next === 'string' && next !== '' ? next : undefined,
    totalResults: typeof total === 'number' ? total : -1,
  };
}

/** The message of a Crossref error body (`{"status":"failed","message":[{"message": ...}]}`), or the text's start. */
function errorDetail(text: string): string {
  try {
    const doc = JSON.parse(text) as { message?: unknown };
    const m = doc.message;
    if (Array.isArray(m))
      return m
        .map((x) =>
          typeof x === 'object' && x && 'message' in x ? String((x as { message: unknown }).message) : String(x),
        )
        .join('; ');
    if (typeof m === 'string') return m;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200).trim();
}

/**
 * How Crossref answers a cursor it no longer knows is not documented: users report 400, and 404 with its plain
 * "Resource not found." (test/fixtures/PROVENANCE.md). So, to a call that sent a cursor other than '*', a 4xx but
 * 429 naming the cursor, a 404 or 410, or a 400 that is not a validation failure of something else is taken as an
 * expired cursor: the window starts again, a bounded number of times (MAX_RESTARTS a window). Kept as a plain
 * error, a dead cursor would have been sent again at every later run.
 */
function isExpiredCursor(status: number, text: string, detail: string): boolean {
  if (status < 400 || status >= 500 || status === 429) return false;
  if (/cursor/i.test(detail) || status === 404 || status === 410) return true;
  return status === 400 && !isValidationFailure(text);
}

/** Crossref's JSON answer to a bad parameter: `{"status": "failed", "message-type": "validation-failure", ...}`. */
function isValidationFailure(text: string): boolean {
  try {
    return (JSON.parse(text) as { 'message-type'?: unknown })['message-type'] === 'validation-failure';
  } catch {
    return false;
  }
}
