import type { IntegratorSettings } from '../../config/index.ts';
import {
  classifyEntries,
  type EntitlementService,
  lookUpEntries,
  orgProblem,
  releaseEntries,
  usedOrg,
} from '../../entitlement/index.ts';
import type { UpdatesTable } from '../../store/index.ts';
import type { IntegratorLimits } from '../limits/index.ts';
import { errorResponse, JSON_HEADERS, notConfigured } from '../wire/index.ts';
import { render } from './reply.ts';
import { readRequest } from './request.ts';

const REPLY_HEADERS = new Headers(JSON_HEADERS);
/** how far past the latest platform deadline a verdict may come before it is answered as a time-out */
const DEADLINE_MARGIN_MS = 50;

export interface EntitlementEnv {
  service: EntitlementService;
  updates: () => UpdatesTable;
  /** the integrators' rate limits, shared by both environments */
  limits?: IntegratorLimits;
}

/**
 * POST /v2.1/entitlements and /v2.2/entitlements (docs/interface.md, "Entitlement API"). Request-level checks in
 * the Updates API's order: key (401), media type (415), size (413) as keyedPost reads them, then JSON, schema and
 * org (400), then the integrator's rate limit (429; IntegratorLimits). Each entry is then a DOI that no platform holds (404), one a deposit answers (open, free, permFree: `oa_platform`, no call),
 * or one its platforms must decide (EntitlementService.ask); the reply is written once all are decided. For a
 * counter integrator, a deposit answers only on a platform without an Entitlement API.
 */
export async function handleEntitlements(
  integrator: IntegratorSettings,
  body: Uint8Array,
  env: EntitlementEnv | undefined,
): Promise<Response> {
  const req = readRequest(body);
  if (req instanceof Response) return req;
  const e = req.entries;
  const badOrg = req.org && orgProblem(req.org);
  if (badOrg || !env) {
    releaseEntries(e);
    return badOrg ? errorResponse(400, 'BAD_REQUEST', badOrg) : notConfigured();
  }
  // last of the request-level checks: a request refused for what it is costs no tokens
  const limited = env.limits?.admit(integrator, e.count);
  if (limited instanceof Response) {
    releaseEntries(e);
    return limited;
  }

  try {
    const { service } = env;
    const lookups = lookUpEntries(e, req.dois, service);
    if (lookups) await lookups; // entries by metadata, resolved to DOIs before any is classified
    service.refresh();
    const { asked, askedAt } = classifyEntries(req.entries, req.dois, service, integrator.counter);
    if (asked.length > 0) {
      const { verdicts, done, waitMs } = service.ask(asked, usedOrg(req.org), integrator);
      await withinDeadline(done, waitMs + DEADLINE_MARGIN_MS);
      askedAt.forEach((at, k) => (e.verdicts[at] = verdicts[k] ?? service.timedOut(asked[k]!)));
    }
    return new Response(render(service, integrator, env.updates, e), { headers: limited ?? REPLY_HEADERS });
  } finally {
    releaseEntries(e); // after the reply has copied the bytes render wrote from them, or whatever threw
  }
}

/**
 * Waits for `done`, or `waitMs` at most: the verdicts still missing then are answered as time-outs, so the request
 * answers in time whatever a platform's socket does.
 */
async function withinDeadline(done: Promise<void>, waitMs: number): Promise<void> {
  let timer: Timer | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, waitMs))));
  await Promise.race([done, late]);
  clearTimeout(timer);
}
