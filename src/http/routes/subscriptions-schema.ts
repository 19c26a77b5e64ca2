import { type Static, Type as t } from '@sinclair/typebox';
import { UpdateObject } from '../../update-record/index.ts';
import { MAX_DOIS_PER_CALL } from '../../webhooks/index.ts';

/** Push alerts' request and response bodies (docs/interface.md, "Push alerts"): one schema each. */

const Dois = t.Array(t.String({ description: 'a DOI: bare (10.x/y), doi:10.x/y or https://doi.org/10.x/y' }), {
  minItems: 1,
  maxItems: MAX_DOIS_PER_CALL,
});

export const SubscriptionRequest = t.Object(
  {
    url: t.String({
      minLength: 1,
      maxLength: 2048,
      description: 'where deliveries are POSTed: an https:// URL on the public internet',
    }),
    types: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: 50,
        description: 'update types sent (retraction, correction, ...); absent: every type',
      }),
    ),
    watch: t.Optional(
      t.Union([t.Literal('list'), t.Literal('prefixes'), t.Literal('everything')], {
        description:
          'list (default): the DOIs of its watch list; prefixes: every work under its hash prefixes; everything',
      }),
    ),
    prefixes: t.Optional(
      t.Array(t.String({ pattern: '^[0-9a-fA-F]{2,64}$' }), {
        minItems: 1,
        maxItems: 10_000,
        description: 'hex prefixes of sha256(DOI key), as the private lookup names works (watch: prefixes)',
      }),
    ),
    dois: t.Optional(Dois),
  },
  { additionalProperties: false },
);
export type SubscriptionRequest = Static<typeof SubscriptionRequest>;

export const DoisRequest = t.Object({ dois: Dois }, { additionalProperties: false });
export type DoisRequest = Static<typeof DoisRequest>;

export const ReplayRequest = t.Object(
  {
    fromEvent: t.Integer({
      minimum: 1,
      description:
        'the event number (from a webhook-id, msg_<subscription>_<event>[_r<n>], or GET .../deliveries) to send again from; the replay’s deliveries get ids of their own, msg_<subscription>_<event>_r<n>',
    }),
  },
  { additionalProperties: false },
);
export type ReplayRequest = Static<typeof ReplayRequest>;

const When = t.String({ description: 'ISO 8601' });

export const SubscriptionResponse = t.Object({
  id: t.String(),
  url: t.String(),
  types: t.Union([t.Array(t.String()), t.Null()]),
  watch: t.String(),
  prefixes: t.Optional(t.Array(t.String())),
  watching: t.Optional(t.Integer({ description: 'DOIs on the watch list' })),
  createdAt: When,
  paused: t.Union([t.Object({ at: When, reason: t.String() }), t.Null()]),
  deliveredThrough: t.Integer({ description: 'the last event delivered' }),
  pending: t.Integer({ description: 'events waiting to be delivered' }),
  failing: t.Union([
    t.Object({ event: t.Integer(), since: When, attempts: t.Integer(), nextAttemptAt: When, lastError: t.String() }),
    t.Null(),
  ]),
  previousSecretValidUntil: t.Optional(When),
  secret: t.Optional(t.String({ description: 'the signing secret (whsec_...): on creation and rotation only' })),
});

export const SubscriptionList = t.Object({ subscriptions: t.Array(SubscriptionResponse) });

export const WatchResponse = t.Object({
  watching: t.Integer(),
  changed: t.Integer({ description: 'DOIs added (PUT) or removed (DELETE) by this call' }),
});

export const DeliveriesResponse = t.Object({
  deliveries: t.Array(
    t.Object({
      event: t.Integer(),
      webhookId: t.String(),
      at: When,
      status: t.Integer({ description: 'the receiver’s HTTP status; 0 when none came' }),
      ok: t.Boolean(),
      outcome: t.Optional(
        t.Union(
          (['delivered', 'http_error', 'timeout', 'connection_failed', 'refused', 'redirect', 'not_kept'] as const).map(
            (o) => t.Literal(o),
          ),
          { description: 'what the attempt came to, a stable code (the deliveries metric’s outcome label)' },
        ),
      ),
      error: t.Optional(t.String({ description: 'why it failed, in words (not stable: match `outcome`)' })),
      ms: t.Integer(),
    }),
    { description: 'the last 100 attempts, newest first' },
  ),
});

export const ReplayResponse = t.Object({
  queued: t.Integer({ description: 'events queued again by this call' }),
  nextEvent: t.Optional(
    t.Integer({
      description: 'present when this call stopped at its bound (100,000 events looked at): call again from it',
    }),
  ),
});

/** What a receiver is POSTed (Standard Webhooks; not a route of ours). */
export const DeliveryBody = t.Object({
  type: t.Literal('updates.changed'),
  doi: t.String(),
  updates: t.Array(UpdateObject, { description: 'the work’s complete current list, as the Updates API gives it' }),
  previous: t.Array(UpdateObject, { description: 'the list before this change, as the change feed showed it' }),
});
