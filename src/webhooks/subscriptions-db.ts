import { mkdirSync } from 'node:fs';
import type { RootDatabase } from 'lmdb';
import { openLmdbFile, openTables, type Tables, table } from '../store/index.ts';
import type { DeliveryOutcome } from './target.ts';

/**
 * The webhooks' own LMDB environment (docs/design.md, "Push alerts"): integrators' subscriptions, their watch lists,
 * the events taken from the change feed and what each subscription still has to be sent. It is not the holdings
 * store: a replica rebuilds that from the bucket, and subscriptions are in no bucket.
 *
 * | database   | key                              | value |
 * |------------|----------------------------------|-------|
 * | subs       | subscription id                  | Subscription |
 * | watch      | doiKey \0 subscription id        | 1 (one range read finds a changed work's watchers) |
 * | watchBySub | subscription id \0 doiKey        | 1 (a subscription's list, to delete or count it) |
 * | events     | event number (u32)               | FeedEvent |
 * | outbox     | subscription id \0 event (8 hex) | 1, or 1 + n (its n-th replay): events still to send, in order |
 * | attempts   | subscription id \0 attempt (8 hex) | Attempt (the last ATTEMPTS_KEPT per subscription) |
 * | last       | doiKey                           | the served list (JSON) as the feed last showed it: `previous` |
 * | meta       | `feedCursor`, `nextEvent`, `deleting`, `deliverer`, `attempts:<id>`, `replays:<id>` | see below |
 *
 * `meta`: the change feed's cursor, the next event's number, the ids of deleted subscriptions whose lists are still
 * being swept, the delivery process that delivers (its pid), and per subscription the count of its attempts and of
 * its replays.
 *
 * Two processes use it at once: the daemon answers the subscription routes from it, and its delivery process
 * follows the feed and delivers (delivery-process.ts). Neither keeps a copy of a subscription: each reads the row
 * when it needs it, and every change to one is a read and a write in one transaction.
 */

export interface Subscription {
  id: string;
  /** the integrator (config name) that owns it: only its key sees or changes it */
  integrator: string;
  url: string;
  /** update types sent (retraction, correction, ...); null: every type */
  types: string[] | null;
  watch: 'list' | 'prefixes' | 'everything';
  /** hex prefixes of sha256(DOI key), for watch = prefixes */
  prefixes: string[];
  /** the current secret first; a rotated-out one with the time it stops being used */
  secrets: { secret: string; until?: number }[];
  createdAt: number;
  paused: { at: number; reason: string } | null;
  watchCount: number;
  /** the last event delivered (acknowledged 2xx) */
  delivered: number;
  /** the event being retried: since when it fails, how many attempts, when the next is due */
  failing: { event: number; since: number; attempts: number; nextAt: number; lastError: string } | null;
}

export interface FeedEvent {
  doi: string;
  /** the served lists as JSON text, as the Updates API gives them */
  updates: string;
  previous: string;
  /** when it was taken from the change feed (ms) */
  at: number;
}

export interface Attempt {
  event: number;
  webhookId: string;
  at: number;
  status: number;
  ok: boolean;
  /** what it came to, a stable code (the metric's label); absent from attempts recorded before it was kept */
  outcome?: DeliveryOutcome;
  error?: string;
  ms: number;
}

export const ATTEMPTS_KEPT = 100;

/** An outbox entry's value for an event taken from the feed; its n-th replay's is 1 + n. */
export const OUTBOX_FROM_FEED = 1;

/** The environment's tables, each declared once: its name, encodings and types (the table in the comment above). */
const WEBHOOK_TABLES = {
  subs: table<Subscription>({ encoding: 'msgpack' }),
  watch: table<number>({ encoding: 'ordered-binary' }),
  watchBySub: table<number>({ encoding: 'ordered-binary' }),
  events: table<FeedEvent, number>({ keyEncoding: 'uint32', encoding: 'msgpack' }),
  outbox: table<number>({ encoding: 'ordered-binary' }),
  attempts: table<Attempt>({ encoding: 'msgpack' }),
  last: table<string>({ encoding: 'string' }),
  meta: table<unknown>({ encoding: 'msgpack' }),
};

export type WebhookDbs = { root: RootDatabase } & Tables<typeof WEBHOOK_TABLES>;

export function openWebhookDbs(path: string, mapSizeBytes: number): WebhookDbs {
  // integrators' secrets are in it: the daemon's user alone reads the folder
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const root = openLmdbFile(path, { mapSizeBytes });
  return { root, ...openTables(root, WEBHOOK_TABLES) };
}

/** `a \0 b`: \0 sorts below every byte of a DOI key or id, so one `a`'s keys are one range. */
export const pair = (a: string, b: string): string => `${a}\u0000${b}`;
/** the range of keys `a \0 ...` */
export const pairRange = (a: string) => ({ start: `${a}\u0000`, end: `${a}\u0001` });
export const seqText = (n: number): string => n.toString(16).padStart(8, '0');
/** a subscription's outbox entry for an event: in event order within the subscription's range */
export const outboxKey = (id: string, event: number): string => pair(id, seqText(event));
export const secondOf = (key: string): string => key.slice(key.indexOf('\u0000') + 1);

/** Every subscription, as stored now. */
export function allSubscriptions(dbs: WebhookDbs): Subscription[] {
  return [...dbs.subs.getRange()].map(({ value }) => value);
}

/** A subscription's first outbox entry: its event and its value (OUTBOX_FROM_FEED, or a replay's number + 1). */
export function firstOutboxEntry(dbs: WebhookDbs, id: string): { event: number; entry: number } | undefined {
  for (const { key, value } of dbs.outbox.getRange({ ...pairRange(id), limit: 1 }))
    return { event: Number.parseInt(secondOf(key as string), 16), entry: value as number };
  return undefined;
}
