import { START, type FeedCursor } from './change-cursor.ts';
import { feedHead, missedWithdrawal, type ChangeRow, type FeedHead, type LineageEntry } from './change-feed.ts';
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
  // every change up to the head read: the client knows the feed whole at the head, and its reading begins there
  if (!more) return { items, next: { commit: head.commit, seq: head.seq, lineage: head.hash.slice(0, 16), began: head.commit }, more };
  const named = coveringEntry(dbs, last!.commit);
  if (!named) return { refused: 'expired', message: expiredMessage() }; // not reached: the head's entry is kept
  return { items, next: { commit: named.commit, seq: last!.seq, lineage: named.entry.hash.slice(0, 16), began: after ? after.began : head.commit }, more };
}

/**
 * The lineage entry that covers a row of `commit`: its own, or the next one kept. A program before 2026-11-24
 * removed the entries of pruned commits but the newest; a later commit's lineage covers every change before it.
 */
function coveringEntry(dbs: StoreDbs, commit: number): { commit: number; entry: LineageEntry } | undefined {
  for (const { key, value } of dbs.changeLineage.getRange({ start: commit, limit: 1 })) return { commit: key as number, entry: value as LineageEntry };
  return undefined;
}

function checkCursor(dbs: StoreDbs, c: FeedCursor, head: FeedHead): CursorRefusal | 'ahead' | undefined {
  if (c.commit > head.commit) return 'ahead';
  if (c.commit === 0) {
    if (c.lineage !== START.lineage) return { refused: 'unknown', message: 'the cursor is not one this service gave out' };
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
