export { backoffMs, type DeliveryOutcome } from './deliveries.ts';
export { DELIVERY_CHILD_ARG, type DeliveryProcessSpec, runDeliveryChild } from './delivery-process.ts';
export type { FeedSource } from './feed-follower.ts';
export { signature, signedHeaders } from './signing.ts';
export type { Attempt, Subscription } from './subscriptions-db.ts';
export { type Resolver, refusedRange, targetProblem, urlProblem } from './target.ts';
export {
  MAX_DOIS_PER_CALL,
  MAX_REPLAY_EVENTS,
  MAX_WATCHED,
  type NewSubscription,
  ROTATION_OVERLAP_MS,
  type SubscriptionView,
  type WebhookFault,
  type WebhookOptions,
  Webhooks,
} from './webhooks.ts';
