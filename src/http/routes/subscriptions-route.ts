import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Fault } from '../../base/index.ts';
import { MAX_DOIS_PER_CALL, type Webhooks } from '../../webhooks/index.ts';
import {
  type BodyLimits,
  describeSchemaFault,
  errorResponse,
  jsonResponse,
  parseJson,
  readJsonBytes,
} from '../wire/index.ts';
import type { ApiKeys } from './api-keys.ts';
import { DoisRequest, ReplayRequest, SubscriptionRequest } from './subscriptions-schema.ts';

/**
 * Push alerts' subscriptions (docs/interface.md, "Push alerts"), each the integrator's own, under
 * /v2.2/subscriptions: create, list, show, pause, resume, rotate its secret, delete; its watch list (PUT and DELETE
 * .../dois); its recent deliveries; a replay. Answered on the replica with `[webhooks] enabled`; the others say
 * where to go (503 WEBHOOKS_NOT_HERE).
 */

export const SUBSCRIPTIONS_PATH = '/v2.2/subscriptions';

/** A watch-list call carries up to 10,000 DOIs: its body may be larger than the other routes' bound. */
const DOIS_BODY_BYTES = MAX_DOIS_PER_CALL * 1100;

const checks = {
  create: TypeCompiler.Compile(SubscriptionRequest),
  dois: TypeCompiler.Compile(DoisRequest),
  replay: TypeCompiler.Compile(ReplayRequest),
};

export interface SubscriptionsHere {
  webhooks: Webhooks | undefined;
  /** where the delivering replica is, for the others' 503 (`[webhooks] servedBy`) */
  servedBy?: string;
}

type Route = { action: string; allow: string; id?: string };

/** The action a path and method name, or the 404 / 405 to answer. */
function routeOf(request: Request): Route | Response {
  const path = new URL(request.url).pathname.slice(SUBSCRIPTIONS_PATH.length);
  const m = /^(?:\/([A-Za-z0-9_]{1,64})(?:\/(dois|pause|resume|rotate-secret|deliveries|replay))?)?\/?$/.exec(path);
  if (!m) return errorResponse(404, 'NOT_FOUND', 'no such route');
  const [, id, sub] = m;
  const allow =
    id === undefined
      ? 'GET, POST'
      : sub === undefined
        ? 'GET, DELETE'
        : sub === 'dois'
          ? 'PUT, DELETE'
          : sub === 'deliveries'
            ? 'GET'
            : 'POST';
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  if (!allow.split(', ').includes(method))
    return errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed here; use ${allow}`, { allow });
  return { action: `${method} ${sub ?? (id === undefined ? '' : 'one')}`, allow, id };
}

export async function handleSubscriptions(
  request: Request,
  keys: ApiKeys,
  here: SubscriptionsHere,
  limits: BodyLimits,
): Promise<Response> {
  const integrator = keys.check(request);
  if (integrator instanceof Response) return integrator;
  const route = routeOf(request);
  if (route instanceof Response) return route;
  const webhooks = here.webhooks;
  if (!webhooks)
    return errorResponse(
      503,
      'WEBHOOKS_NOT_HERE',
      `subscriptions are kept and delivered by one replica (the one with [webhooks] enabled = true), not this one${
        here.servedBy ? `: use ${here.servedBy}` : ''
      }`,
    );
  const who = integrator.name;
  const id = route.id!;
  const body = async <T>(check: (typeof checks)[keyof typeof checks], shape: string, maxBytes = limits.maxBytes) => {
    const bytes = await readJsonBytes(request, { ...limits, maxBytes });
    if (bytes instanceof Response) return bytes;
    const parsed = parseJson(bytes);
    if (parsed instanceof Response) return parsed;
    const v = parsed.value as { dois?: unknown };
    if (Array.isArray(v?.dois) && v.dois.length > MAX_DOIS_PER_CALL)
      return errorResponse(
        400,
        'BAD_REQUEST',
        `/dois: ${v.dois.length} DOIs given; send at most ${MAX_DOIS_PER_CALL} per call`,
      );
    if (!check.Check(parsed.value))
      return errorResponse(
        400,
        'BAD_REQUEST',
        describeSchemaFault(check as never, parsed.value, shape, 'a DOI string'),
      );
    return parsed.value as T;
  };
  switch (route.action) {
    case 'GET ':
      return reply({ subscriptions: webhooks.list(who) });
    case 'POST ': {
      const req = await body<SubscriptionRequest>(
        checks.create,
        '{"url": "https://...", "types"?, "watch"?, "prefixes"?, "dois"?}',
        DOIS_BODY_BYTES,
      );
      if (req instanceof Response) return req;
      const made = await webhooks.create(who, req);
      return 'code' in made ? faulted(made) : reply({ ...made.view, secret: made.secret }, 201);
    }
    case 'GET one':
      return answer(webhooks.show(who, id));
    case 'DELETE one': {
      const r = webhooks.remove(who, id);
      return r === true ? new Response(null, { status: 204 }) : faulted(r);
    }
    case 'PUT dois':
    case 'DELETE dois': {
      const req = await body<DoisRequest>(checks.dois, '{"dois": ["10.x/y", ...]}', DOIS_BODY_BYTES);
      if (req instanceof Response) return req;
      return answer(webhooks.changeWatch(who, id, req.dois, request.method === 'PUT'));
    }
    case 'POST pause':
    case 'POST resume':
      return answer(webhooks.setPaused(who, id, route.action === 'POST pause'));
    case 'POST rotate-secret': {
      const r = webhooks.rotateSecret(who, id);
      return 'code' in r ? faulted(r) : reply({ ...r.view, secret: r.secret });
    }
    case 'GET deliveries': {
      const r = webhooks.attempts(who, id);
      if ('code' in r) return faulted(r);
      return reply({ deliveries: r.map((a) => ({ ...a, at: new Date(a.at).toISOString() })) });
    }
    case 'POST replay': {
      const req = await body<ReplayRequest>(checks.replay, '{"fromEvent": 1}');
      if (req instanceof Response) return req;
      return answer(webhooks.replay(who, id, req.fromEvent));
    }
  }
  return errorResponse(404, 'NOT_FOUND', 'no such route');
}

function reply(value: unknown, status = 200): Response {
  return jsonResponse(JSON.stringify(value), status);
}

function answer(r: object | Fault): Response {
  return 'code' in r && 'message' in r ? faulted(r as Fault) : reply(r);
}

function faulted(f: Fault): Response {
  const status = f.code === 'NOT_FOUND' ? 404 : 400;
  return errorResponse(status, f.code as never, f.message);
}
