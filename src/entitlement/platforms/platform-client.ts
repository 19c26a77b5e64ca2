import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { boundedText, TokenBucket } from '../../base/index.ts';
import type { PlatformSettings } from '../../config/index.ts';
import { ACCESS_TYPES, type AccessType } from '../../deposit/index.ts';
import { readDoiInput } from '../../doi/index.ts';
import type { PlatformVerdict } from '../api/index.ts';
import { type Org, PlatformAnswer, PlatformEntitlement, type PlatformRequest } from '../api/index.ts';
import { readCustomerID, readLicenses, readLinks } from './answer-members.ts';
import { CircuitBreaker } from './breaker.ts';
import { ConcurrencyCap } from './concurrency-cap.ts';
import { signJwtHs256 } from './jwt.ts';
import { type CallOutcome, PlatformFigures } from './platform-figures.ts';

const checkAnswer = TypeCompiler.Compile(PlatformAnswer);
const checkEntry = TypeCompiler.Compile(PlatformEntitlement);
/** a platform's answer for 100 DOIs is a few KB; more than this is not an answer */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

interface CallerSettings {
  /** the JWT `iss` */
  name: string;
  userAgent: string;
  breakerFailures: number;
  breakerCooldownMs: number;
  /** durations: a clock never stepped back (Entitlements) */
  now: () => number;
  /** a JWT's `iat` */
  timeOfDay: () => number;
}

/**
 * Calls one platform's Entitlement API the way GetFTR's publisher integration does (docs/interface.md,
 * "Entitlement API"): POST `{"org", "dois"}` in batches, a JWT (HS256, the shared secret) per call, at most
 * `entitlementConcurrency` calls in flight, each closed at the time-out; a circuit breaker stops calling a platform
 * that keeps failing. Connections are kept alive and reused (Bun's fetch pools them per host).
 */
export class PlatformClient {
  readonly breaker: CircuitBreaker;
  private readonly slots: ConcurrencyCap;
  /** the calls a second the platform declared it takes (entitlementRate); none: no limit */
  private readonly rate: TokenBucket | undefined;

  constructor(
    readonly settings: PlatformSettings & { entitlementUrl: string; entitlementSecret: string },
    private readonly caller: CallerSettings,
    /** the platform's totals so far: a client replaced by a reload hands them to the next */
    readonly figures = new PlatformFigures(),
  ) {
    this.breaker = new CircuitBreaker(
      caller.breakerFailures,
      caller.breakerCooldownMs,
      caller.now,
      () => this.figures.breakerOpens++,
    );
    this.slots = new ConcurrencyCap(settings.entitlementConcurrency);
    const rate = settings.entitlementRate;
    this.rate = rate && new TokenBucket(rate.perSecond, rate.burst, caller.now);
  }

  /**
   * Asks about `dois` (bare DOIs with their keys, one per key) for `integrator` and `org`, in calls of at most
   * `entitlementBatch`: one batch per call, in order, each with the range of `dois` it holds and the call's result
   * (verdictOf reads a DOI's verdict from it). Never rejects: failures are verdicts. `deadline` is a clock time.
   */
  ask(dois: readonly { bare: string; key: string }[], org: Org, integrator: string, deadline: number): AskedBatch[] {
    const out: AskedBatch[] = [];
    const size = this.settings.entitlementBatch;
    // the batches share one deadline, so one timer signal: a signal per call costs as much as parsing its answer
    const signal = AbortSignal.timeout(Math.max(1, deadline - this.caller.now()));
    for (let from = 0; from < dois.length; from += size) {
      const to = Math.min(dois.length, from + size);
      const bare: string[] = [];
      for (let i = from; i < to; i++) bare.push(dois[i]!.bare);
      out.push({ from, to, result: this.call(bare, org, integrator, deadline, signal) });
    }
    return out;
  }

  /** One call: the verdict per DOI key of the batch, or one verdict for all (a failed call). */
  private async call(
    batch: string[],
    org: Org,
    integrator: string,
    deadline: number,
    signal: AbortSignal,
  ): Promise<BatchResult> {
    const ticket = this.breaker.allow();
    if (!ticket) return this.outcome('breaker_open', TIMED_OUT);
    const slot = await this.slots.acquire(deadline, this.caller.now);
    // A slot that came with too little time left (our queue, or our event loop held up) sends nothing: its
    // time-out would say nothing about the platform, and must not count against its breaker.
    if (!slot || signal.aborted || deadline - this.caller.now() < this.minCallMs) {
      if (slot) this.slots.release();
      this.breaker.cancel(ticket);
      return this.outcome('no_slot', TIMED_OUT);
    }
    if (this.rate && !(await this.turn(deadline, signal))) {
      this.slots.release();
      this.breaker.cancel(ticket);
      return this.outcome('rate_limited', TIMED_OUT);
    }
    const started = performance.now();
    // Once: by the call's end, or by the guard should the call outlive its signal (a socket that ignores it). A
    // call the guard ended was a time-out, counted and answered then: what it gives later is neither.
    let settled = false;
    const done = (o: CallOutcome, result: PlatformVerdict | Map<string, PlatformVerdict>): BatchResult => {
      if (settled) return LATE;
      settled = true;
      clearTimeout(guard);
      this.slots.release();
      if (o === 'ok') this.breaker.success(ticket);
      else this.breaker.failure(ticket);
      this.figures.latency.observe((performance.now() - started) / 1000);
      return this.outcome(o, result);
    };
    let guard: Timer | undefined;
    const guarded = new Promise<BatchResult>((resolve) => {
      guard = setTimeout(
        () => resolve(done('timeout', TIMED_OUT)),
        Math.max(0, deadline - this.caller.now()) + GUARD_MS,
      );
    });
    return Promise.race([
      this.exchange(batch, org, integrator, signal).then(([o, result]) => done(o, result)),
      guarded,
    ]);
  }

  /**
   * Waits for the call's token of the platform's rate, after its slot, so that calls leave no faster than the rate;
   * false when the token would come too late to send the call (it is then not waited for: the DOIs answer as a
   * time-out at once, and no breaker failure is counted, as the platform was not asked).
   */
  private async turn(deadline: number, signal: AbortSignal): Promise<boolean> {
    const wait = this.rate!.reserve(1, deadline - this.caller.now() - this.minCallMs);
    if (wait < 0) return false;
    if (wait > 0) await Bun.sleep(wait);
    return !signal.aborted && deadline - this.caller.now() >= this.minCallMs;
  }

  /** The call itself: what came of it (never rejects). */
  private async exchange(
    batch: string[],
    org: Org,
    integrator: string,
    signal: AbortSignal,
  ): Promise<[CallOutcome, PlatformVerdict | Map<string, PlatformVerdict>]> {
    try {
      const body: PlatformRequest = { org, dois: batch };
      const response = await fetch(this.settings.entitlementUrl, {
        method: 'POST',
        headers: this.headers(batch[0]!, integrator),
        body: JSON.stringify(body),
        signal,
        // a redirect is an answer other than 200 (an error), never followed: it would take the reader's org elsewhere
        redirect: 'manual',
        // the bytes as sent: the answer's bound (MAX_ANSWER_BYTES) must hold for what is read, not what it expands to
        decompress: false,
      } as RequestInit);
      const text = await boundedText(response, MAX_ANSWER_BYTES);
      if (response.status !== 200) return ['error', FAILED];
      // asked for identity: a compressed answer is not one this client reads
      const encoding = response.headers.get('content-encoding');
      if (encoding !== null && encoding.toLowerCase() !== 'identity') return ['malformed', FAILED];
      const answers = text === undefined ? undefined : parseAnswer(text, org);
      return answers ? ['ok', answers] : ['malformed', FAILED];
    } catch (e) {
      // refused, reset, DNS, TLS: an error; the signal firing (while connecting, waiting or reading): a time-out
      const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
      return timedOut ? ['timeout', TIMED_OUT] : ['error', FAILED];
    }
  }

  /** the least time a call is worth sending with: a tenth of the time-out, at most 50 ms */
  private get minCallMs(): number {
    return Math.min(50, this.settings.entitlementTimeoutMs / 10);
  }

  private outcome(o: CallOutcome, result: PlatformVerdict | Map<string, PlatformVerdict>): BatchResult {
    this.figures.calls[o]++;
    return result instanceof Map ? { byKey: result } : { all: result };
  }

  private headers(firstDoi: string, integrator: string): Record<string, string> {
    const claims = {
      iss: this.caller.name,
      aud: this.settings.name,
      sub: integrator,
      iat: Math.floor(this.caller.timeOfDay() / 1000),
      jti: randomUUID(),
      doi: firstDoi,
    };
    return {
      'content-type': 'application/json',
      accept: 'application/json',
      // the answer's bound (MAX_ANSWER_BYTES) is on the bytes read: a compressed answer could expand past it
      'accept-encoding': 'identity',
      'user-agent': this.caller.userAgent,
      'x-integrator-id': integrator,
      'x-request-id': randomUUID(),
      authorization: `Bearer ${signJwtHs256(claims, this.settings.entitlementSecret)}`,
    };
  }
}

/** how long past its deadline a call that ignores its signal keeps its slot and its breaker ticket */
const GUARD_MS = 100;

/** A call's result: a verdict per DOI key of the batch, or one verdict for all of them (the call failed). */
type BatchResult = { byKey: Map<string, PlatformVerdict> } | { all: PlatformVerdict };

/** One call of an ask: the asked DOIs [from, to), and what the call gave. */
interface AskedBatch {
  from: number;
  to: number;
  result: Promise<BatchResult>;
}

/** The verdict a call's result gives the DOI of `key` (an answer that left it out: as a failure). */
export function verdictOf(r: BatchResult, key: string): PlatformVerdict {
  return 'all' in r ? r.all : (r.byKey.get(key) ?? LEFT_OUT);
}

/** A time-out, or the breaker answering as for one: GetFTR's per-document 504. */
export const TIMED_OUT: PlatformVerdict = { statusCode: 504, entitled: 'maybe', source: 'unknown' };
/** What a call the guard ended gives when it ends after all. */
const LATE: BatchResult = { all: TIMED_OUT };
/** An error, a malformed answer, a refused connection. */
const FAILED: PlatformVerdict = { statusCode: 200, entitled: 'maybe', source: 'unknown' };
/** The answer left this DOI out, or its entry was malformed. */
const LEFT_OUT = FAILED;

/** The answer's entries by DOI key; undefined when the body is not `{"entitlements": [...]}`. Bad entries are left out. */
function parseAnswer(text: string, org: Org): Map<string, PlatformVerdict> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!checkAnswer.Check(value)) return undefined;
  const out = new Map<string, PlatformVerdict>();
  const twice = new Set<string>();
  for (const entry of value.entitlements) {
    if (!checkEntry.Check(entry)) continue;
    const input = readDoiInput(entry.doi);
    if (input.problem !== undefined || twice.has(input.key)) continue;
    const first = out.get(input.key);
    if (first !== undefined) {
      // one DOI answered twice: the first stands if they agree on `entitled`, else neither (as left out: maybe)
      if (first.entitled === entry.entitled) continue;
      out.delete(input.key);
      twice.add(input.key);
      continue;
    }
    const v: PlatformVerdict = { statusCode: 200, entitled: entry.entitled, source: 'service_request', org };
    if (isAccessType(entry.accessType)) v.accessType = entry.accessType;
    if (entry.document !== undefined) v.document = entry.document;
    // only the members we describe are passed on to integrators
    if (entry.vor !== undefined)
      v.vor = entry.vor.map((item) =>
        item.contentType === undefined ? { url: item.url } : { url: item.url, contentType: item.contentType },
      );
    const more = entry as Record<string, unknown>;
    const av = readLinks(more.av);
    if (av) v.av = av;
    const licenses = readLicenses(more.licenses);
    if (licenses) v.licenses = licenses;
    const customerID = readCustomerID(more.org);
    if (customerID !== undefined) v.customerID = customerID;
    out.set(input.key, v);
  }
  return out;
}

/** The body as text, or undefined once it is larger than any answer should be (the rest is not read). */
function isAccessType(a: string | undefined): a is AccessType {
  return a !== undefined && (ACCESS_TYPES as readonly string[]).includes(a);
}
