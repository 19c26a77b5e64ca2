import type { StoreDbs } from '../environment/index.ts';
import { type FeedCursor, START } from './change-cursor.ts';
import { type ChangeRow, type FeedHead, feedHead, type LineageEntry, missedWithdrawal } from './change-feed.ts';

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
 * and itself back, until this store has caught up. A client that may have missed a pruned withdrawal gets 410:
 * one whose reading began before the withdrawal's commit and whose cursor is before it (missedWithdrawal). A full
 * sync begun after the pruning never is, however old the rows it reads.
 */
export function readChanges(dbs: StoreDbs, after: FeedCursor | undefined, limit: number): ChangesPage | CursorRefusal {
  const head = feedHead(dbs);
  if (after) {
    const refusal = checkCursor(dbs, after, head);
    if (refusal === 'ahead') return { items: [], next: after, more: false };
    if (refusal) return refusal;
  }
  const from = after ?? START;
  const items: string[] = [];
  let last: { seq: number } | undefined;
  let more = false;
  for (const { key, value } of dbs.changes.getRange({ start: from.seq + 1, limit: limit + 1 })) {
    if (items.length === limit) {
      more = true;
      break;
    }
    const row = value as ChangeRow;
    items.push(row[3]);
    last = { seq: key as number };
  }
  // every change up to the head read: the tip, which needs no `began` (0): a withdrawal it could miss is after it
  if (!more)
    return { items, next: { commit: head.commit, seq: head.seq, lineage: head.hash.slice(0, 16), began: 0 }, more };
  // the head's lineage covers every change read; any replica that made the same changes holds its entry (a row's own
  // commit's entry may be gone where the program before 2026-11-24 pruned). The reading began no later than this
  // head: a replica behind the one that gave `after` must not move it past what it served.
  const began = after ? Math.min(after.began, head.commit) : head.commit;
  return { items, next: { commit: head.commit, seq: last!.seq, lineage: head.hash.slice(0, 16), began }, more };
}

function checkCursor(dbs: StoreDbs, c: FeedCursor, head: FeedHead): CursorRefusal | 'ahead' | undefined {
  if (c.commit > head.commit) return 'ahead';
  if (c.commit === 0) {
    if (c.lineage !== START.lineage)
      return { refused: 'unknown', message: 'the cursor is not one this service gave out' };
  } else {
    const entry = dbs.changeLineage.get(c.commit) as LineageEntry | undefined;
    if (!entry) return { refused: 'expired', message: expiredMessage() }; // removed by an older program's pruning
    if (entry.hash.slice(0, 16) !== c.lineage)
      return {
        refused: 'otherHistory',
        message:
          'the cursor belongs to another history of the change feed (a replica fed differently, or a store rebuilt since); ' +
          'sync again from the start: call without "after"',
      };
    if (c.seq > entry.lastSeq) return { refused: 'unknown', message: 'the cursor is not one this service gave out' };
  }
  if (missedWithdrawal(head, c.began, c.seq)) return { refused: 'expired', message: expiredMessage() };
  return undefined;
}

function expiredMessage(): string {
  return 'the cursor is older than the change feed keeps (withdrawals since may have left it); sync again from the start: call without "after"';
}
