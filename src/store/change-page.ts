import { START, type FeedCursor } from './change-cursor.ts';
import { feedHead, type ChangeRow, type LineageEntry } from './change-feed.ts';
import type { StoreDbs } from './environment.ts';

/** One page of the change feed: items as JSON text, the cursor after them, and whether more are waiting. */
export interface ChangesPage {
  items: string[];
  next: FeedCursor;
  more: boolean;
}

/** Why a cursor cannot be continued here: `expired` and `otherHistory` mean "sync again from the start" (410). */
export type CursorRefusal = { refused: 'expired' | 'otherHistory' | 'unknown'; message: string };

/**
 * The changes after `after` (from the start when undefined), at most `limit`. A cursor is taken when this store's
 * lineage at the cursor's commit is the one the cursor names: then this store numbered every change up to the
 * cursor as the store that gave it did (change-feed.ts). A cursor from a replica that is ahead gets an empty page
 * and itself back, until this store has caught up.
 */
export function readChanges(dbs: StoreDbs, after: FeedCursor | undefined, limit: number): ChangesPage | CursorRefusal {
  const head = feedHead(dbs);
  const from = after ?? START;
  if (after) {
    const refusal = checkCursor(dbs, after, head.commit, head.prunedThrough);
    if (refusal === 'ahead') return { items: [], next: after, more: false };
    if (refusal) return refusal;
  }
  const items: string[] = [];
  let last: { seq: number; commit: number } | undefined;
  let more = false;
  for (const { key, value } of dbs.changes.getRange({ start: from.seq + 1, limit: limit + 1 })) {
    if (items.length === limit) {
      more = true;
      break;
    }
    const row = value as ChangeRow;
    items.push(row[3]);
    last = { seq: key as number, commit: row[0] };
  }
  if (!last) return { items, next: from, more: false };
  const entry = dbs.changeLineage.get(last.commit) as LineageEntry | undefined;
  // the commit's entry goes only when it is pruned, and then its works without updates went with it: start again
  if (!entry) return { refused: 'expired', message: expiredMessage() };
  return { items, next: { commit: last.commit, seq: last.seq, lineage: entry.hash.slice(0, 16) }, more };
}

function checkCursor(dbs: StoreDbs, c: FeedCursor, headCommit: number, prunedThrough: number): CursorRefusal | 'ahead' | undefined {
  if (c.seq < prunedThrough) return { refused: 'expired', message: expiredMessage() };
  if (c.commit > headCommit) return 'ahead';
  if (c.commit === 0) return c.lineage === START.lineage ? undefined : { refused: 'unknown', message: 'the cursor is not one this service gave out' };
  const entry = dbs.changeLineage.get(c.commit) as LineageEntry | undefined;
  if (!entry) return { refused: 'expired', message: expiredMessage() };
  if (entry.hash.slice(0, 16) !== c.lineage)
    return {
      refused: 'otherHistory',
      message:
        'the cursor belongs to another history of the change feed (a replica fed differently, or a store rebuilt since); ' +
        'sync again from the start: call without "after"',
    };
  if (c.seq < entry.firstSeq || c.seq > entry.lastSeq) return { refused: 'unknown', message: 'the cursor is not one this service gave out' };
  return undefined;
}

function expiredMessage(): string {
  return 'the cursor is older than the change feed keeps (withdrawals since may have left it); sync again from the start: call without "after"';
}
