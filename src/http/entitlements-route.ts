import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { IntegratorSettings } from '../config/index.ts';
import { readDoiInput } from '../doi/index.ts';
import {
  EntitlementsRequest,
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
import { errorResponse, JSON_HEADERS } from './errors.ts';
import { ReplyBytes } from './reply-bytes.ts';
import { describeSchemaFault } from './schema-fault.ts';

const checkRequest = TypeCompiler.Compile(EntitlementsRequest);
const reply = new ReplyBytes();
const REPLY_HEADERS = new Headers(JSON_HEADERS);
const encoder = new TextEncoder();
const OPEN_HEAD = encoder.encode(',"statusCode":200,"entitled":"yes","accessType":"');
const OA_SOURCE = encoder.encode('","source":"oa_platform"');
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
  const parsed = parseJson(body);
  if (parsed instanceof Response) return parsed;
  if (!checkRequest.Check(parsed.value)) return errorResponse(400, 'BAD_REQUEST', describeSchemaFault(checkRequest, parsed.value, SHAPE, ENTRY));
  const req = parsed.value as EntitlementsRequest;
  const badOrg = req.org && orgProblem(req.org);
  if (badOrg) return errorResponse(400, 'BAD_REQUEST', badOrg);
  if (!env) return errorResponse(404, 'NOT_CONFIGURED', 'this environment is not configured');

  const { service } = env;
  service.refresh();
  const n = req.dois.length;
  const sent: string[] = new Array(n);
  const uids: (string | undefined)[] = new Array(n);
  const kinds = new Uint8Array(n);
  const plain = new Uint8Array(n);
  const keysOf: string[] = new Array(n);
  const values: (Uint8Array | string | undefined)[] = new Array(n); // index value, or the 400 message
  const asked: AskedDoi[] = [];
  const askedAt: number[] = [];
  const part: OpenPart = { access: 'open', vorStart: 0, vorEnd: 0 };
  for (let i = 0; i < n; i++) {
    const entry = req.dois[i]!;
    const doi = typeof entry === 'string' ? entry : entry.doi;
    if (typeof entry !== 'string') uids[i] = entry.uid;
    if (doi === undefined) {
      kinds[i] = NO_DOI;
      continue;
    }
    sent[i] = doi;
    const input = readDoiInput(doi);
    if (input.problem !== undefined) {
      kinds[i] = INVALID;
      values[i] = input.problem;
      continue;
    }
    keysOf[i] = input.key;
    plain[i] = input.plain ? 1 : 0;
    const value = service.lookup(input.key);
    values[i] = value;
    if (!value) kinds[i] = UNKNOWN;
    else if (service.openPart(value, part)) kinds[i] = OPEN;
    else {
      kinds[i] = ASK;
      asked.push({ doiKey: input.key, bare: input.bare, holdings: service.index.holdings(value) });
      askedAt.push(i);
    }
  }
  const verdicts: (PlatformVerdict | undefined)[] = new Array(n);
  if (asked.length > 0) {
    const org = usedOrg(req.org);
    const { verdicts: pending, waitMs } = service.ask(asked, org, integrator);
    const settled = await withinDeadline(pending, waitMs + DEADLINE_MARGIN_MS);
    askedAt.forEach((at, k) => (verdicts[at] = settled[k] ?? service.timedOut(asked[k]!)));
  }
  return new Response(render(service, integrator, env.updates, { sent, plain, uids, kinds, keysOf, values, verdicts }, part), { headers: REPLY_HEADERS });
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
  sent: string[];
  /** 1: the DOI as sent is plain (src/doi/input.ts) and goes into the reply without escaping */
  plain: Uint8Array;
  uids: (string | undefined)[];
  kinds: Uint8Array;
  keysOf: string[];
  /** the index value (OPEN, ASK) or the message (INVALID) */
  values: (Uint8Array | string | undefined)[];
  verdicts: (PlatformVerdict | undefined)[];
}

function render(service: EntitlementService, integrator: IntegratorSettings, updatesOf: () => UpdatesTable, e: Entries, part: OpenPart): Uint8Array {
  const { sent, plain, uids, kinds, keysOf, values, verdicts } = e;
  const updates = integrator.updates ? updatesOf() : undefined;
  const out = reply.start().ascii('{"entitlements":[');
  for (let i = 0; i < kinds.length; i++) {
    if (i > 0) out.ascii(',');
    const kind = kinds[i]!;
    if (kind === NO_DOI) out.ascii('{"statusCode":400,"message":"this entry has no doi: entitlements are answered by DOI only, not by title or other metadata"');
    else if (plain[i] === 1) out.piece(DOI_OPEN).ascii(sent[i]!).ascii('"');
    else out.ascii('{"doi":').text(JSON.stringify(sent[i]));
    if (kind === NO_DOI) service.count('invalid');
    else if (kind === INVALID) {
      out.ascii(',"statusCode":400,"message":').text(JSON.stringify(values[i]));
      service.count('invalid');
    } else if (kind === UNKNOWN) {
      out.ascii(',"statusCode":404');
      service.count('none');
    } else if (kind === OPEN) {
      const value = values[i] as Uint8Array;
      service.openPart(value, part);
      out.piece(OPEN_HEAD).ascii(part.access).piece(OA_SOURCE);
      if (part.vorEnd > part.vorStart) out.piece(VOR).bytes(value.subarray(part.vorStart, part.vorEnd));
      service.count('oa_platform');
    } else writeVerdict(out, verdicts[i]!, service);
    const uid = uids[i];
    if (uid !== undefined) out.ascii(',"uid":').text(JSON.stringify(uid));
    if (updates) out.ascii(',"updates":').bytes((keysOf[i] !== undefined && updates.get(keysOf[i]!)) || NO_UPDATES);
    out.ascii('}');
  }
  return out.ascii(']}').take();
}

function writeVerdict(out: ReplyBytes, v: PlatformVerdict, service: EntitlementService): void {
  out.ascii(`,"statusCode":${v.statusCode},"entitled":"${v.entitled}"`);
  if (v.accessType) out.ascii(`,"accessType":"${v.accessType}"`);
  out.ascii(`,"source":"${v.source}"`);
  if (v.document !== undefined) out.ascii(',"document":').text(JSON.stringify(v.document));
  if (v.vor !== undefined) out.ascii(',"vor":').text(JSON.stringify(v.vor));
  if (v.org !== undefined) out.ascii(',"org":').text(JSON.stringify(v.org));
  service.count(v.source);
}
