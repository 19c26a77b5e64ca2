import { JsonBytes } from '../bytes/index.ts';
import { MAX_DOIS_PER_REQUEST, NOT_PLAIN, plainDoiKey, readDoiInput } from '../doi/index.ts';
import type { EntitlementsRequest, PlatformVerdict } from './api/index.ts';
import type { AskedDoi, EntitlementService } from './entitlement-service.ts';
import { openPart, recordView } from './holdings-index/index.ts';
import { type LookupOutcome, type MetadataQuery, metadataProblem } from './lookup/index.ts';

/**
 * A request's entries, as the Entitlement API's route read them (http/entitlements/request.ts), each decided here
 * against the holdings index (docs/design.md, "Entitlements"): not a DOI, held by no platform, answered from a
 * deposit, or for platforms to decide. The route then writes the reply from what is decided.
 */

const decoder = new TextDecoder(); // for spans of printable ASCII (the scanner admits no others in a string)

/** Entry kinds of one request, decided before anything is written. */
export const INVALID = 0;
export const UNKNOWN = 1;
export const OPEN = 2;
export const ASK = 3;
/** an object entry without `doi` that is not looked up (no lookup configured, or its metadata cannot be): a 400 */
export const NO_DOI = 4;
/** an entry by metadata for which Crossref found no published version: a 404 with `doi` "unknown" */
export const LOOKUP_NONE = 5;
/** an entry by metadata whose lookup did not complete (time-out, 429, failure): a 504 with `doi` "unknown" */
export const LOOKUP_FAILED = 6;

/** What the first pass found out about each entry of a request, by entry number (the first `count` of each array). */
export interface Entries {
  count: number;
  /** a plain body's bytes and each entry's range in them (the entries of a parsed body are strings instead) */
  body?: Uint8Array;
  spans?: Int32Array;
  /** a plain-body entry that is a plain DOI: its folded hash (the index's and the updates table's), else NOT_PLAIN */
  hashes: Int32Array;
  /** the DOI as sent, for a parsed body (a plain body's entries are written from its bytes) */
  sent: (string | undefined)[];
  /** 1: `sent` is a plain DOI (src/doi/input.ts) and goes into the reply without escaping */
  plain: Uint8Array;
  uids: (string | undefined)[];
  kinds: Uint8Array;
  /** the DOI key and bare form, where a platform or the updates table needs them as strings */
  keysOf: (string | undefined)[];
  bare: (string | undefined)[];
  /** OPEN entries: the access code, and the vor JSON's range in `vor` (written as each is classified) */
  vor: JsonBytes;
  access: Uint8Array;
  vorStart: Int32Array;
  vorEnd: Int32Array;
  /**
   * why the entry is not a DOI (INVALID), cannot be looked up (NO_DOI), or its lookup did not complete
   * (LOOKUP_FAILED)
   */
  message: (string | undefined)[];
  /** what the lookup of an entry by metadata came to (lookUpEntries), before it is classified */
  lookups: (LookupOutcome | undefined)[];
  verdicts: (PlatformVerdict | undefined)[];
}

/** An Entries of full capacity, with the span buffer a plain body's scan writes into. */
interface PooledEntries extends Entries {
  readonly spanBuffer: Int32Array;
}

/**
 * Entries are reused: a request takes one before it reads its body and gives it back (releaseEntries) once its
 * reply is written. Making them anew (a dozen arrays a request) was a tenth of a one-DOI request's time. A request
 * waiting for platforms keeps its own, so concurrent requests never share one.
 */
const free: PooledEntries[] = [];
/** enough for the requests of a busy server at one moment; more are made and dropped */
const MAX_FREE = 64;

export function takeEntries(): PooledEntries {
  const e = free.pop();
  if (e) return e;
  const n = MAX_DOIS_PER_REQUEST;
  return {
    count: 0,
    spanBuffer: new Int32Array(2 * n),
    hashes: new Int32Array(n),
    sent: new Array<string | undefined>(n).fill(undefined),
    plain: new Uint8Array(n),
    uids: new Array<string | undefined>(n).fill(undefined),
    kinds: new Uint8Array(n),
    keysOf: new Array<string | undefined>(n).fill(undefined),
    bare: new Array<string | undefined>(n).fill(undefined),
    vor: new JsonBytes(1 << 14),
    access: new Uint8Array(n),
    vorStart: new Int32Array(n),
    vorEnd: new Int32Array(n),
    message: new Array<string | undefined>(n).fill(undefined),
    lookups: new Array<LookupOutcome | undefined>(n).fill(undefined),
    verdicts: new Array<PlatformVerdict | undefined>(n).fill(undefined),
  };
}

/**
 * Gives a request's entries back once its reply is written: what it held is cleared (nothing of one request may
 * show in another's answer, and its strings and body are not kept alive).
 */
export function releaseEntries(entries: Entries): void {
  const e = entries as PooledEntries;
  for (let i = 0; i < e.count; i++) {
    e.sent[i] = e.uids[i] = e.keysOf[i] = e.bare[i] = e.message[i] = undefined;
    e.verdicts[i] = e.lookups[i] = undefined;
    e.plain[i] = e.kinds[i] = 0;
  }
  e.count = 0;
  e.body = e.spans = undefined;
  e.vor.reset();
  if (free.length < MAX_FREE) free.push(e);
}

/**
 * Entries by metadata (object entries without `doi`) looked up at Crossref, all together, before the first pass
 * classifies them (docs/interface.md, "Entries by metadata"): each found one is then answered as its DOI. Returns
 * undefined when there is nothing to look up (no such entry, or no lookup configured: they stay 400 entries), so
 * that a request by DOI only never waits a turn for it. The lookups end by the lookup's time-out; the platforms'
 * deadline starts after them.
 */
export function lookUpEntries(
  e: Entries,
  dois: EntitlementsRequest['dois'] | undefined,
  service: EntitlementService,
): Promise<void> | undefined {
  const lookup = service.lookup;
  if (!lookup || !dois) return undefined;
  const at: number[] = [];
  const queries: MetadataQuery[] = [];
  for (let i = 0; i < e.count; i++) {
    const entry = dois[i]!;
    if (typeof entry === 'string' || entry.doi !== undefined) continue;
    const problem = metadataProblem(entry);
    if (problem !== undefined) e.message[i] = problem;
    else {
      at.push(i);
      queries.push(entry as MetadataQuery);
    }
  }
  if (at.length === 0) return undefined;
  return lookup.resolve(queries, performance.now() + lookup.settings.timeoutMs).then((outcomes) => {
    at.forEach((i, k) => (e.lookups[i] = outcomes[k]));
  });
}

/**
 * The first pass: every entry classified against the index; returns the DOIs platforms must decide, and their
 * entry numbers. An open entry's vor JSON is written out at once (the index's records are read where they are,
 * and a later lookup of a warming index may add to it). For a `counter` integrator an open holding of a platform
 * with an Entitlement API is asked, not answered from the deposit (EntitlementService.openPart).
 */
export function classifyEntries(
  e: Entries,
  dois: EntitlementsRequest['dois'] | undefined,
  service: EntitlementService,
  counter = false,
): { asked: AskedDoi[]; askedAt: number[] } {
  const asked: AskedDoi[] = [];
  const askedAt: number[] = [];
  if (e.spans) touchSpans(e, service);
  for (let i = 0; i < e.count; i++) {
    const ref = e.spans ? classifySpan(e, i, service) : classifyEntry(e, i, dois![i]!, service);
    if (ref < 0) continue;
    const record = service.index.read(ref, view);
    if (service.openPart(record, part, counter)) {
      e.kinds[i] = OPEN;
      e.access[i] = part.code;
      e.vorStart[i] = e.vor.pos;
      service.index.writeLinks(e.vor, record, part);
      e.vorEnd[i] = e.vor.pos;
    } else {
      const holdings = service.holdings(record);
      if (holdings.length === 0) {
        e.kinds[i] = UNKNOWN; // held only by platforms no longer configured
        continue;
      }
      e.kinds[i] = ASK;
      if (e.keysOf[i] === undefined) setStrings(e, i); // a plain DOI read from bytes: its strings, now that a platform needs them
      asked.push({ doiKey: e.keysOf[i]!, bare: e.bare[i]!, holdings });
      askedAt.push(i);
    }
  }
  return { asked, askedAt };
}
const part = openPart();
const view = recordView();

/** A parsed entry: its DOI read by the DOI rule; returns the ref of its index record (-1: decided already). */
function classifyEntry(
  e: Entries,
  i: number,
  entry: EntitlementsRequest['dois'][number],
  service: EntitlementService,
): number {
  const looked = e.lookups[i];
  const doi = typeof entry === 'string' ? entry : (entry.doi ?? (looked?.kind === 'found' ? looked.doi : undefined));
  if (typeof entry !== 'string') e.uids[i] = entry.uid;
  if (doi === undefined) {
    e.kinds[i] = looked === undefined ? NO_DOI : looked.kind === 'not_found' ? LOOKUP_NONE : LOOKUP_FAILED;
    if (looked?.kind === 'failed') e.message[i] = looked.fault.message;
    return -1;
  }
  e.sent[i] = doi;
  return classifyDoi(e, i, doi, service);
}

function classifyDoi(e: Entries, i: number, doi: string, service: EntitlementService): number {
  const input = readDoiInput(doi);
  if (input.problem !== undefined) {
    e.kinds[i] = INVALID;
    e.message[i] = input.problem;
    return -1;
  }
  e.keysOf[i] = input.key;
  e.bare[i] = input.bare;
  e.plain[i] = input.plain ? 1 : 0;
  return found(e, i, service.index.refOfKey(input.key));
}

/**
 * An entry of a plain body, read from its bytes: a plain DOI is looked up by the hash the scanner made
 * (scanEntitlementBody) without making a string; any other string takes the DOI rule.
 */
function classifySpan(e: Entries, i: number, service: EntitlementService): number {
  const h = e.hashes[i]!;
  const start = e.spans![2 * i]!;
  const end = e.spans![2 * i + 1]!;
  if (h === NOT_PLAIN) return classifyDoi(e, i, decoder.decode(e.body!.subarray(start, end)), service);
  return found(e, i, service.index.refAt(e.body!, start, end, h));
}

/** A plain DOI of a plain body as strings: sent as it is, its key by the plain rule. */
function setStrings(e: Entries, i: number): void {
  const doi = decoder.decode(e.body!.subarray(e.spans![2 * i], e.spans![2 * i + 1]));
  e.keysOf[i] = plainDoiKey(doi)!;
  e.bare[i] = doi;
}

/** The index memory of each plain DOI (by the hash the scanner made) touched before any is looked up. */
function touchSpans(e: Entries, service: EntitlementService): void {
  const { hashes, count } = e;
  const index = service.index;
  for (let i = 0; i < count; i++) if (hashes[i] !== NOT_PLAIN) index.touchSlot(hashes[i]!);
  for (let i = 0; i < count; i++) if (hashes[i] !== NOT_PLAIN) index.touchRecord(hashes[i]!);
}

function found(e: Entries, i: number, at: number): number {
  if (at < 0) e.kinds[i] = UNKNOWN;
  return at;
}
