import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { IntegratorSettings } from '../config/index.ts';
import { NOT_PLAIN, plainDoiHash, plainDoiKey, readDoiInput } from '../doi/index.ts';
import {
  ACCESS,
  EntitlementsRequest,
  valueEnd,
  MAX_ENTITLEMENT_DOIS,
  Org,
  orgProblem,
  usedOrg,
  type AskedDoi,
  type EntitlementService,
  type OpenPart,
  type PlatformVerdict,
} from '../entitlement/index.ts';
import type { UpdatesTable } from '../store/index.ts';
import type { ApiKeys } from './auth.ts';
import { parseJson, readJsonBytes } from './body.ts';
import { scanEntitlementBody } from './plain-body.ts';
import { errorResponse, JSON_HEADERS } from './errors.ts';
import { ReplyBytes } from './reply-bytes.ts';
import { describeSchemaFault } from './schema-fault.ts';

const checkRequest = TypeCompiler.Compile(EntitlementsRequest);
const checkOrg = TypeCompiler.Compile(Org);
/** the plain-body scanner's output, reused: copied for a request before its first await */
const spans = new Int32Array(2 * MAX_ENTITLEMENT_DOIS);
const orgSpan = new Int32Array(2);
const ascii = new TextDecoder(); // for spans of ASCII bytes
const reply = new ReplyBytes();
const REPLY_HEADERS = new Headers(JSON_HEADERS);
const encoder = new TextEncoder();
/** an answer from the deposit after its `doi`, up to its `vor`, by the index's access code */
const OPEN_ANSWER = ACCESS.map((a) => encoder.encode(`,"statusCode":200,"entitled":"yes","accessType":"${a}","source":"oa_platform"`));
const VOR = encoder.encode(',"vor":');
const DOI_OPEN = encoder.encode('{"doi":"');
const NO_UPDATES = encoder.encode('[]');
/** how far past the latest platform deadline a verdict may come before it is answered as a time-out */
const DEADLINE_MARGIN_MS = 50;

/** Entry kinds of one request, decided before anything is written. */
const INVALID = 0;
const UNKNOWN = 1;
const OPEN = 2;
const ASK = 3;
/** an object entry without `doi` (GetFTR's lookup by metadata) */
const NO_DOI = 4;

export interface EntitlementEnv {
  service: EntitlementService;
  updates: () => UpdatesTable;
}

/**
 * POST /v2.1/entitlements and /v2.2/entitlements (docs/interface.md, "Entitlement API"). Request-level checks in
 * the Updates API's order: key (401), media type (415), size (413), JSON, schema and org (400). Each entry is
 * then a DOI that no platform holds (404), one a deposit answers (open, free, permFree: `oa_platform`, no call),
 * or one its platforms must decide (EntitlementService.ask); the reply is written once all are decided.
 */
export async function handleEntitlements(request: Request, keys: ApiKeys, env: EntitlementEnv | undefined, maxBodyBytes: number): Promise<Response> {
  const integrator = keys.find(request.headers.get('x-api-key'));
  if (!integrator)
    return errorResponse(401, 'UNAUTHORIZED', request.headers.has('x-api-key') ? 'the x-api-key is not known' : 'the x-api-key header is missing');
  const body = await readJsonBytes(request, maxBodyBytes);
  if (body instanceof Response) return body;
  const req = readRequest(body);
  if (req instanceof Response) return req;
  const badOrg = req.org && orgProblem(req.org);
  if (badOrg) return errorResponse(400, 'BAD_REQUEST', badOrg);
  if (!env) return errorResponse(404, 'NOT_CONFIGURED', 'this environment is not configured');

  const { service } = env;
  service.refresh();
  const e = req.entries;
  e.arena = service.index.arena; // this pass is synchronous: every offset it takes points into this arena
  const asked: AskedDoi[] = [];
  const askedAt: number[] = [];
  if (e.spans) hashSpans(e, service);
  for (let i = 0; i < e.kinds.length; i++) {
    const at = e.spans ? classifySpan(e, i, service) : classifyEntry(e, i, req.dois![i]!, service);
    if (at < 0) continue;
    const end = valueEnd(e.arena, at);
    if (service.index.openPart(e.arena, part, at, end)) {
      e.kinds[i] = OPEN;
      e.access[i] = ACCESS.indexOf(part.access);
      e.vorStart[i] = part.vorStart;
      e.vorEnd[i] = part.vorEnd;
    } else {
      e.kinds[i] = ASK;
      if (e.keysOf[i] === undefined) setStrings(e, i); // a plain DOI read from bytes: its strings, now that a platform needs them
      asked.push({ doiKey: e.keysOf[i]!, bare: e.bare[i]!, holdings: service.index.holdings(e.arena, at, end) });
      askedAt.push(i);
    }
  }
  if (asked.length > 0) {
    const { verdicts: pending, waitMs } = service.ask(asked, usedOrg(req.org), integrator);
    const settled = await withinDeadline(pending, waitMs + DEADLINE_MARGIN_MS);
    askedAt.forEach((at, k) => (e.verdicts[at] = settled[k] ?? service.timedOut(asked[k]!)));
  }
  return new Response(render(service, integrator, env.updates, e), { headers: REPLY_HEADERS });
}
const part: OpenPart = { access: 'open', vorStart: 0, vorEnd: 0 };

/**
 * The request's org and entries. A body in the plain shape (scanEntitlementBody: DOI strings of printable ASCII,
 * and an org object) is read from its bytes, the org slice alone parsed; any other body is parsed and checked in
 * full. Both readings mean the same (test/http/entitlements-plain.test.ts).
 */
function readRequest(body: Uint8Array): { org?: Org; dois?: EntitlementsRequest['dois']; entries: Entries } | Response {
  const count = scanEntitlementBody(body, spans, MAX_ENTITLEMENT_DOIS, orgSpan);
  if (count >= 0) {
    const org = orgSpan[0]! < 0 ? undefined : orgOf(body.subarray(orgSpan[0], orgSpan[1]));
    if (org !== INVALID_ORG) {
      const e = newEntries(count);
      e.body = body;
      e.spans = spans.slice(0, 2 * count); // the shared scan buffer is reused by the next request while this one waits
      return { org, entries: e };
    }
  }
  const parsed = parseJson(body);
  if (parsed instanceof Response) return parsed;
  if (!checkRequest.Check(parsed.value)) return errorResponse(400, 'BAD_REQUEST', describeSchemaFault(checkRequest, parsed.value, SHAPE, ENTRY));
  const req = parsed.value as EntitlementsRequest;
  return { org: req.org, dois: req.dois, entries: newEntries(req.dois.length) };
}

/**
 * The org object of a plain body, or INVALID_ORG when the slice is not an org the schema takes (the general path
 * then says why). An integrator sends the same few orgs again and again: their readings are remembered, by text.
 */
function orgOf(slice: Uint8Array): Org | typeof INVALID_ORG {
  const text = ascii.decode(slice);
  let org = orgReadings.get(text);
  if (org === undefined) {
    try {
      const value = JSON.parse(text) as unknown;
      org = checkOrg.Check(value) ? value : INVALID_ORG;
    } catch {
      org = INVALID_ORG;
    }
    if (orgReadings.size >= MAX_ORG_READINGS) orgReadings.clear();
    orgReadings.set(text, org);
  }
  return org;
}
const INVALID_ORG = Symbol('invalid org');
const orgReadings = new Map<string, Org | typeof INVALID_ORG>();
const MAX_ORG_READINGS = 4096;

/** A parsed entry: its DOI read by the DOI rule; returns where its index value starts (-1: decided already). */
function classifyEntry(e: Entries, i: number, entry: EntitlementsRequest['dois'][number], service: EntitlementService): number {
  const doi = typeof entry === 'string' ? entry : entry.doi;
  if (typeof entry !== 'string') e.uids[i] = entry.uid;
  if (doi === undefined) {
    e.kinds[i] = NO_DOI;
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
  return found(e, i, service.index.valueAtKey(input.key));
}

/**
 * An entry of a plain body, read from its bytes: a plain DOI is looked up by its hash (hashSpans) without making
 * a string; any other string takes the DOI rule.
 */
function classifySpan(e: Entries, i: number, service: EntitlementService): number {
  const h = e.hashes[i]!;
  const start = e.spans![2 * i]!;
  const end = e.spans![2 * i + 1]!;
  if (h === NOT_PLAIN) return classifyDoi(e, i, ascii.decode(e.body!.subarray(start, end)), service);
  return found(e, i, service.index.valueAt(e.body!, start, end, h));
}

/** A plain DOI of a plain body as strings: sent as it is, its key by the plain rule. */
function setStrings(e: Entries, i: number): void {
  const doi = ascii.decode(e.body!.subarray(e.spans![2 * i], e.spans![2 * i + 1]));
  e.keysOf[i] = plainDoiKey(doi)!;
  e.bare[i] = doi;
}

/** Each span's plain-DOI hash (NOT_PLAIN for others), its index memory touched before any is looked up. */
function hashSpans(e: Entries, service: EntitlementService): void {
  const { body, spans, hashes } = e;
  const index = service.index;
  for (let i = 0; i < hashes.length; i++) hashes[i] = plainDoiHash(body!, spans![2 * i]!, spans![2 * i + 1]!);
  for (let i = 0; i < hashes.length; i++) if (hashes[i] !== NOT_PLAIN) index.touchSlot(hashes[i]!);
  for (let i = 0; i < hashes.length; i++) if (hashes[i] !== NOT_PLAIN) index.touchRecord(hashes[i]!);
}

function found(e: Entries, i: number, at: number): number {
  if (at < 0) e.kinds[i] = UNKNOWN;
  return at;
}

const SHAPE = '{"org"?: {...}, "dois": ["10.xxxx/...", {"doi": "10.xxxx/...", "uid"?: "..."}, ...]}';
const ENTRY = 'an entry is a DOI string or {"doi": "10.xxxx/...", "uid"?: "..."}';

/**
 * Every verdict settled within `waitMs`; the missing ones are left undefined (answered as time-outs): the request
 * answers in time whatever a platform's socket does.
 */
async function withinDeadline(verdicts: Promise<PlatformVerdict>[], waitMs: number): Promise<(PlatformVerdict | undefined)[]> {
  let timer: Timer | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, waitMs))));
  const out: (PlatformVerdict | undefined)[] = new Array(verdicts.length);
  let pending = verdicts.length;
  const all = new Promise<void>((resolve) =>
    verdicts.forEach((p, i) =>
      p.then((v) => {
        out[i] = v;
        if (--pending === 0) resolve();
      }),
    ),
  );
  await Promise.race([all, late]);
  clearTimeout(timer);
  return out;
}

/** What the first pass found out about each entry of a request, by entry number. */
interface Entries {
  /** a plain body's bytes and each entry's range in them (the entries of a parsed body are strings instead) */
  body?: Uint8Array;
  spans?: Int32Array;
  /** a plain-body entry that is a plain DOI: its folded hash (for the updates table), else -1 */
  hashes: Int32Array;
  /** the DOI as sent (parsed bodies, and span entries that are not plain DOIs) */
  sent: (string | undefined)[];
  /** 1: `sent` is a plain DOI (src/doi/input.ts) and goes into the reply without escaping */
  plain: Uint8Array;
  uids: (string | undefined)[];
  kinds: Uint8Array;
  /** the DOI key and bare form, where a platform or the updates table needs them as strings */
  keysOf: (string | undefined)[];
  bare: (string | undefined)[];
  /** the index's arena during the first pass; OPEN entries: the access code and the vor JSON's range in it */
  arena?: Uint8Array;
  access: Uint8Array;
  vorStart: Int32Array;
  vorEnd: Int32Array;
  /** why the entry is not a DOI (INVALID) */
  message: (string | undefined)[];
  verdicts: (PlatformVerdict | undefined)[];
}

function newEntries(n: number): Entries {
  return {
    hashes: new Int32Array(n).fill(-1),
    sent: new Array(n),
    plain: new Uint8Array(n),
    uids: new Array(n),
    kinds: new Uint8Array(n),
    keysOf: new Array(n),
    bare: new Array(n),
    access: new Uint8Array(n),
    vorStart: new Int32Array(n),
    vorEnd: new Int32Array(n),
    message: new Array(n),
    verdicts: new Array(n),
  };
}

function render(service: EntitlementService, integrator: IntegratorSettings, updatesOf: () => UpdatesTable, e: Entries): Uint8Array {
  const { sent, plain, uids, kinds, keysOf, verdicts, body, spans, hashes, arena } = e;
  const updates = integrator.updates ? updatesOf() : undefined;
  let orgBytes: Uint8Array | undefined; // every platform answer of a request carries the request's org
  let invalid = 0;
  let none = 0;
  let open = 0;
  const out = reply.start().ascii('{"entitlements":[');
  for (let i = 0; i < kinds.length; i++) {
    if (i > 0) out.ascii(',');
    const kind = kinds[i]!;
    if (kind === OPEN && spans && sent[i] === undefined && uids[i] === undefined && !updates) {
      writeOpenSpan(out, body!, spans[2 * i]!, spans[2 * i + 1]!, OPEN_ANSWER[e.access[i]!]!, arena!, e.vorStart[i]!, e.vorEnd[i]!);
      open++;
      continue;
    }
    if (kind === NO_DOI) out.ascii('{"statusCode":400,"message":"this entry has no doi: entitlements are answered by DOI only, not by title or other metadata"');
    else if (spans && sent[i] === undefined) out.piece(DOI_OPEN).range(body!, spans[2 * i]!, spans[2 * i + 1]!).ascii('"'); // printable ASCII, no escapes: scanned so
    else if (plain[i] === 1) out.piece(DOI_OPEN).ascii(sent[i]!).ascii('"');
    else out.ascii('{"doi":').text(JSON.stringify(sent[i]));
    if (kind === NO_DOI) invalid++;
    else if (kind === INVALID) {
      out.ascii(',"statusCode":400,"message":').text(JSON.stringify(e.message[i]));
      invalid++;
    } else if (kind === UNKNOWN) {
      out.ascii(',"statusCode":404');
      none++;
    } else if (kind === OPEN) {
      out.bytes(OPEN_ANSWER[e.access[i]!]!); // ~80 bytes: a native copy
      if (e.vorEnd[i]! > e.vorStart[i]!) out.piece(VOR).range(arena!, e.vorStart[i]!, e.vorEnd[i]!);
      open++;
    } else {
      const v = verdicts[i]!;
      writeVerdict(out, v, () => (orgBytes ??= encoder.encode(JSON.stringify(v.org))));
      service.count(v.source);
    }
    const uid = uids[i];
    if (uid !== undefined) out.ascii(',"uid":').text(JSON.stringify(uid));
    if (updates) {
      const list = hashes[i]! >= 0 ? updates.getHashed(hashes[i]!, body!, spans![2 * i]!, spans![2 * i + 1]!) : keysOf[i] !== undefined ? updates.get(keysOf[i]!) : undefined;
      out.ascii(',"updates":').bytes(list ?? NO_UPDATES);
    }
    out.ascii('}');
  }
  service.count('invalid', invalid);
  service.count('none', none);
  service.count('oa_platform', open);
  return out.ascii(']}').take();
}

/**
 * The most common answer, written in one go: an open DOI of a plain body, without uid or updates:
 * `{"doi":"<bytes>"<head>,"vor":<vor JSON>}` (the same bytes as the general branches of render write).
 */
function writeOpenSpan(out: ReplyBytes, body: Uint8Array, start: number, end: number, head: Uint8Array, arena: Uint8Array, vorStart: number, vorEnd: number): void {
  const buf = out.reserve(DOI_OPEN.length + (end - start) + 1 + head.length + VOR.length + (vorEnd - vorStart) + 1);
  let p = out.position;
  for (let k = 0; k < DOI_OPEN.length; k++) buf[p++] = DOI_OPEN[k]!;
  for (let k = start; k < end; k++) buf[p++] = body[k]!;
  buf[p++] = 0x22; // "
  buf.set(head, p);
  p += head.length;
  if (vorEnd > vorStart) {
    for (let k = 0; k < VOR.length; k++) buf[p++] = VOR[k]!;
    buf.set(arena.subarray(vorStart, vorEnd), p);
    p += vorEnd - vorStart;
  }
  buf[p++] = 0x7d; // }
  out.moveTo(p);
}

function writeVerdict(out: ReplyBytes, v: PlatformVerdict, orgBytes: () => Uint8Array): void {
  out.piece(verdictHead(v));
  if (v.document !== undefined) out.ascii(',"document":').jsonString(v.document);
  if (v.vor !== undefined) {
    out.ascii(',"vor":[');
    v.vor.forEach((item, k) => {
      out.ascii(k === 0 ? '{"url":' : ',{"url":').jsonString(item.url);
      if (item.contentType !== undefined) out.ascii(',"contentType":').jsonString(item.contentType);
      out.ascii('}');
    });
    out.ascii(']');
  }
  if (v.org !== undefined) out.ascii(',"org":').bytes(orgBytes());
}

/** `,"statusCode":…,"entitled":…,"accessType":…,"source":…` of a verdict, encoded once per combination. */
function verdictHead(v: PlatformVerdict): Uint8Array {
  const key = `${v.statusCode}${v.entitled}${v.accessType ?? ''}${v.source}`;
  let head = verdictHeads.get(key);
  if (!head) {
    const access = v.accessType ? `,"accessType":"${v.accessType}"` : '';
    head = encoder.encode(`,"statusCode":${v.statusCode},"entitled":"${v.entitled}"${access},"source":"${v.source}"`);
    verdictHeads.set(key, head); // a few dozen combinations at most: every field is from a closed set
  }
  return head;
}
const verdictHeads = new Map<string, Uint8Array>();
