import {
  DeliveriesResponse,
  DeliveryBody,
  DoisRequest,
  ReplayRequest,
  ReplayResponse,
  SubscriptionList,
  SubscriptionRequest,
  SubscriptionResponse,
  WatchResponse,
} from '../routes/index.ts';

/** OpenAPI paths, schemas and the `webhooks` entry of push alerts (subscriptions-route.ts), for document.ts. */

export const subscriptionSchemas = {
  SubscriptionRequest,
  SubscriptionResponse,
  SubscriptionList,
  DoisRequest,
  WatchResponse,
  DeliveriesResponse,
  ReplayRequest,
  ReplayResponse,
  DeliveryBody,
};

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const error = (description: string) => ({ description, content: json('Error') });
const body = (schema: string) => ({ required: true, content: json(schema) });
const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'the subscription’s id (sub_...)',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_]{1,64}$' },
};

export function subscriptionPaths(errors: Record<string, object>): Record<string, object> {
  const { '400': bad, '401': unauthorized, '413': tooLarge, '415': mediaType } = errors as Record<string, object>;
  const notHere = error(
    'WEBHOOKS_NOT_HERE: this replica does not hold subscriptions; the message names where to go (docs/operations.md)',
  );
  const notFound = error('NOT_FOUND: no subscription of yours with this id');
  const common = { '401': unauthorized, '503': notHere };
  const withBody = { '400': bad, '413': tooLarge, '415': mediaType };
  const op = (operationId: string, summary: string, responses: object, extra: object = {}) => ({
    operationId,
    summary,
    security: [{ apiKey: [] }],
    ...(operationId === 'listSubscriptions' || operationId === 'createSubscription'
      ? {}
      : { parameters: [idParameter] }),
    ...extra,
    responses: { ...responses, ...common },
  });
  // adding to the watch list and removing from it take the same body and answer alike
  const watchListEdit = (operationId: string, summary: string) =>
    op(
      operationId,
      summary,
      {
        '200': { description: 'The list’s size after the call', content: json('WatchResponse') },
        ...withBody,
        '404': notFound,
      },
      { requestBody: body('DoisRequest') },
    );
  return {
    '/v2.2/subscriptions': {
      get: op('listSubscriptions', 'Your push-alert subscriptions', {
        '200': { description: 'Every subscription of your key', content: json('SubscriptionList') },
      }),
      post: op(
        'createSubscription',
        'A push-alert subscription: where to, which update types, and what it watches (a DOI list, hash prefixes or everything)',
        {
          '201': {
            description:
              'Created; `secret` (whsec_...) is given here once: every delivery is signed with it (Standard Webhooks)',
            content: json('SubscriptionResponse'),
          },
          ...withBody,
          '400': error(
            'A body that breaks the schema, a DOI that is not one, a target URL refused (TARGET_REFUSED: its scheme, or its name or address private or loopback), or one subscription more than an integrator may hold (TOO_MANY_SUBSCRIPTIONS)',
          ),
        },
        { requestBody: body('SubscriptionRequest') },
      ),
    },
    '/v2.2/subscriptions/{id}': {
      get: op('getSubscription', 'One subscription', {
        '200': { description: 'The subscription', content: json('SubscriptionResponse') },
        '404': notFound,
      }),
      delete: op('deleteSubscription', 'Deletes a subscription and its watch list', {
        '204': { description: 'Deleted' },
        '404': notFound,
      }),
    },
    '/v2.2/subscriptions/{id}/dois': {
      put: watchListEdit(
        'watchDois',
        'Adds up to 10,000 DOIs to the watch list (any accepted DOI form; letter case ignored)',
      ),
      delete: watchListEdit('unwatchDois', 'Removes up to 10,000 DOIs from the watch list'),
    },
    ...Object.fromEntries(
      (
        [
          ['pause', 'pauseSubscription', 'Pauses deliveries; events still gather'],
          ['resume', 'resumeSubscription', 'Resumes deliveries, a failing one at once with a fresh retry period'],
          [
            'rotate-secret',
            'rotateSubscriptionSecret',
            'A new signing secret; the old one signs beside it for 24 hours',
          ],
        ] as const
      ).map(([action, operationId, summary]) => [
        `/v2.2/subscriptions/{id}/${action}`,
        {
          post: op(operationId, summary, {
            '200': {
              description: 'The subscription (with `secret` after a rotation)',
              content: json('SubscriptionResponse'),
            },
            '404': notFound,
          }),
        },
      ]),
    ),
    '/v2.2/subscriptions/{id}/deliveries': {
      get: op('listDeliveries', 'The last 100 delivery attempts and their outcomes, newest first', {
        '200': { description: 'The attempts', content: json('DeliveriesResponse') },
        '404': notFound,
      }),
    },
    '/v2.2/subscriptions/{id}/replay': {
      post: op(
        'replayDeliveries',
        'Sends again every event from an event number on that the subscription watches',
        {
          '200': {
            description:
              'How many events were queued, and `nextEvent` when the call stopped at its bound (100,000 events looked at): call again from it',
            content: json('ReplayResponse'),
          },
          ...withBody,
          '404': notFound,
        },
        { requestBody: body('ReplayRequest') },
      ),
    },
  };
}

/** OpenAPI 3.1's `webhooks`: what a receiver is sent. */
export function subscriptionWebhooks(): Record<string, object> {
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
  });
  return {
    updatesChanged: {
      post: {
        operationId: 'updatesChanged',
        // we call the receiver: it checks our signature, not a key of ours
        security: [],
        summary: 'A watched work’s updates changed (retracted, corrected, withdrawn, reinstated)',
        description:
          'Signed as Standard Webhooks (https://www.standardwebhooks.com): verify with any of its libraries and your secret. ' +
          'At least once, in change-feed order per subscription: `webhook-id` (msg_<subscription>_<event>) stays the same across retries, so deduplicate by it; a replay you asked for comes as msg_<subscription>_<event>_r<n>, new ids.',
        parameters: [
          header('webhook-id', 'the event’s id, the same on every retry'),
          header('webhook-timestamp', 'Unix seconds of this attempt'),
          header('webhook-signature', '`v1,<base64 HMAC-SHA256>`, space-separated, one per valid secret'),
        ],
        requestBody: body('DeliveryBody'),
        responses: {
          '200': { description: 'Any 2xx acknowledges the event; anything else (or no answer in time) is retried' },
        },
      },
    },
  };
}
