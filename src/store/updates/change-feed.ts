import { createHash, type Hash } from 'node:crypto';
import { bumpUpdatesGen, classifyStoreError, META, type StoreDbs } from '../environment/index.ts';
import { encodeCursor, GENESIS } from './change-cursor.ts';
import { servedUpdates, type UpdatesEntry } from './work-updates.ts';

/**
 * The change feed (docs/design.md, "Change feed"): every work whose served update list changed, once, at the
 * sequence number of its latest change, with the list as it is now. Sequence numbers and the lineage hash are
 * a function of the changes alone (no clock, no replica id), so two replicas that made the same changes in the
 * same order hold the same feed, and a cursor says which history it belongs to.
 */

/** `changes` value: [commit, doi as the source gave it, sha256 hex of the DOI key, item JSON, has updates (1) or not (0)] */
export type ChangeRow = [commit: number, doi: string, hash: string, item: string, live: 0 | 1];

/** `changeLineage` value for one feed-changing commit */
export interface LineageEntry {
  /** sha256 hex over the previous entry's hash and this commit's changes (seq, key hash, item), in order */
  hash: string;
  firstSeq: number;
  lastSeq: number;
  /** this replica's clock when it committed: only for pruning, which never changes what a cursor means */
  at: number;
}

/** META.changeFeed */
export interface FeedHead {
  commit: number;
  seq: number;
  hash: string;
  /** commits up to this one are pruned: their works without updates left the feed */
  prunedCommit: number;
  /** the last sequence number of commit prunedCommit */
  prunedThrough: number;
  /**
   * The newest pruned commit that removed a withdrawal, and the highest sequence number removed: a client whose
   * reading began before that commit and whose cursor is before that number may have missed it (410).
   */
  withdrawnCommit?: number;
  withdrawnThrough?: number;
  /**
   * The prunedCommit the marks above were kept up to. The program before 2026-11-24 pruned without them (and
   * copies them unchanged if it runs again): where this is not prunedCommit, prunedCommit and prunedThrough may
   * have removed withdrawals the marks do not know of, and stand for them too (missedWithdrawal).
   */
  withdrawnAsOf?: number;
}

const EMPTY_HEAD: FeedHead = {
  commit: 0,
  seq: 0,
  hash: GENESIS,
  prunedCommit: 0,
  prunedThrough: 0,
  withdrawnCommit: 0,
  withdrawnThrough: 0,
  withdrawnAsOf: 0,
};

/** The withdrawal marks, or, where pruning may have run without keeping them, marks that cover what it may have removed. */
function withdrawalMarks(head: FeedHead): { commit: number; through: number } {
  const commit = head.withdrawnCommit ?? 0;
  const through = head.withdrawnThrough ?? 0;
  if (head.withdrawnAsOf === head.prunedCommit) return { commit, through };
  return { commit: Math.max(commit, head.prunedCommit), through: Math.max(through, head.prunedThrough) };
}

/**
 * Whether a client whose reading began at head commit `began` and who has every change up to `seq` may have missed
 * a withdrawal that pruning removed: one removed after `seq` from a commit after `began`. Removed sequence numbers
 * grow with their commits, so the newest such commit and the highest number removed decide it.
 */
export function missedWithdrawal(head: FeedHead, began: number, seq: number): boolean {
  const { commit, through } = withdrawalMarks(head);
  return commit > began && through > seq;
}
/** how long a withdrawal (a work whose list became empty) stays in the feed, unless the store is told otherwise */
export const DEFAULT_KEEP_MS = 90 * 86_400_000;

export function feedHead(dbs: StoreDbs): FeedHead {
  return (dbs.meta.get(META.changeFeed) as FeedHead | undefined) ?? EMPTY_HEAD;
}

/** The rows of every work that has updates now (a withdrawn work's row stays, without them, until pruned). */
export function* liveRows(dbs: StoreDbs): Generator<ChangeRow> {
  for (const { value } of dbs.changes.getRange()) if ((value as ChangeRow)[4] === 1) yield value as ChangeRow;
}

const UPDATES_MEMBER = '"updates":';

/** The served list (JSON) inside a row's item: the DOI is a JSON string before it, where `"updates":` cannot occur unescaped. */
export function servedOfItem(item: string): string {
  return item.slice(item.indexOf(UPDATES_MEMBER) + UPDATES_MEMBER.length, -1);
}

/** Tip writes by this process, by store folder: a reader's cached tip (ChangeFeedView.isTip) is stale once it moves. */
const tipWriteCounts = new Map<string, number>();

export function tipWrites(path: string): number {
  return tipWriteCounts.get(path) ?? 0;
}

function tipWritten(path: string): void {
  tipWriteCounts.set(path, tipWrites(path) + 1);
}

/** sha256 of a DOI key as lower-case hex: the feed's and the private lookup's name for a work */
export function keyHash(doiKey: string): string {
  return Bun.SHA256.hash(doiKey, 'hex') as string;
}

/**
 * Records one commit's changes, inside its write transaction: `record` for every work the commit rewrites (before
 * it is put: it sets `changeSeq`), then `finish`.
 */
export class ChangeFeedWriter {
  private readonly head: FeedHead;
  private lineage: Hash | undefined;
  private firstSeq = 0;

  constructor(private readonly dbs: StoreDbs) {
    this.head = { ...feedHead(dbs) };
  }

  /** `next` is the entry about to be stored for `key`; a change of its served list takes the next sequence number. */
  record(key: string, before: UpdatesEntry | undefined, next: UpdatesEntry): void {
    const served = JSON.stringify(servedUpdates(next));
    if (before && served === JSON.stringify(servedUpdates(before))) {
      if (before.changeSeq !== undefined) next.changeSeq = before.changeSeq;
      return;
    }
    if (!before && served === '[]') return;
    this.put(key, before?.changeSeq, next, served);
  }

  /** `entry` as stored, its row rendered by older rules: a new row (and true) when what it serves now differs. */
  rerender(key: string, entry: UpdatesEntry): boolean {
    const row =
      entry.changeSeq === undefined ? undefined : (this.dbs.changes.get(entry.changeSeq) as ChangeRow | undefined);
    const served = JSON.stringify(servedUpdates(entry));
    if ((row ? servedOfItem(row[3]) : '[]') === served) return false;
    this.put(key, row ? entry.changeSeq : undefined, entry, served);
    return true;
  }

  private put(key: string, beforeSeq: number | undefined, next: UpdatesEntry, served: string): void {
    const { dbs, head } = this;
    if (!this.lineage) {
      this.lineage = createHash('sha256').update(head.hash);
      head.commit++;
      this.firstSeq = head.seq + 1;
    }
    const seq = ++head.seq;
    if (beforeSeq !== undefined) dbs.changes.removeSync(beforeSeq);
    next.changeSeq = seq;
    const hash = keyHash(key);
    const item = `{"doi":${JSON.stringify(next.doi)},${UPDATES_MEMBER}${served}}`;
    dbs.changes.putSync(seq, [head.commit, next.doi, hash, item, served === '[]' ? 0 : 1] satisfies ChangeRow);
    this.lineage.update(`${seq}\n${hash}\n${item}\n`);
  }

  /** Ends the commit: its lineage entry, the head, and the pruning of withdrawals older than `keepMs`. */
  finish(now: number, keepMs: number): void {
    const { dbs, head } = this;
    if (this.lineage) {
      head.hash = this.lineage.digest('hex');
      dbs.changeLineage.putSync(head.commit, {
        hash: head.hash,
        firstSeq: this.firstSeq,
        lastSeq: head.seq,
        at: now,
      } satisfies LineageEntry);
      dbs.meta.putSync(
        META.changeFeedTip,
        encodeCursor({ commit: head.commit, seq: head.seq, lineage: head.hash.slice(0, 16), began: 0 }),
      );
      tipWritten(dbs.path);
    }
    this.prune(now - keepMs);
    dbs.meta.putSync(META.changeFeed, head);
  }

  /**
   * Works without updates (a withdrawal) leave the feed once their commit is older than `cutoff`; a client that
   * may have missed one answers 410 (missedWithdrawal). Works with updates stay: a full sync needs them. Lineage
   * entries stay too (a few dozen bytes a commit): a cursor names the commit of a row that may be years old.
   */
  private prune(cutoff: number): void {
    const { dbs, head } = this;
    for (let c = head.prunedCommit + 1; c <= head.commit; c++) {
      const e = dbs.changeLineage.get(c) as LineageEntry | undefined;
      if (!e || e.at > cutoff) break;
      // marks an older program's pruning left behind are made whole first (withdrawalMarks)
      if (head.withdrawnAsOf !== head.prunedCommit) {
        const marks = withdrawalMarks(head);
        [head.withdrawnCommit, head.withdrawnThrough] = [marks.commit, marks.through];
      }
      let removed = 0;
      for (const { key, value } of dbs.changes.getRange({ start: e.firstSeq, end: e.lastSeq + 1 }))
        if ((value as ChangeRow)[4] === 0) {
          dbs.changes.removeSync(key as number);
          removed = key as number;
        }
      if (removed > 0) [head.withdrawnCommit, head.withdrawnThrough] = [c, removed];
      head.prunedCommit = c;
      head.prunedThrough = e.lastSeq;
      head.withdrawnAsOf = c;
    }
  }
}

/**
 * The rules servedUpdates renders by. 2: notice DOIs compared as DOIs (case aside), and Record IDs joining copies
 * across feeds transitively; 3: a notice without a DOI named by its Record ID; 4: Record IDs join copies of one
 * update type only (a retraction was hidden behind an expression of concern of its record); 5: one Retraction Watch
 * record, one current nature (a correction relayed after a retraction no longer leaves it retracted). A store whose rows
 * older rules rendered gets every work whose served list now differs as one commit when it is opened for writing
 * (rerenderChangeFeed): the APIs serve from the rows.
 */
const SERVED_RULES = 5;

/**
 * A store made before the change feed (or opened for the first time) gets one: every work with updates, in key
 * order, as commit 1, so replicas with the same updates start the same feed. Rows rendered by older rules are
 * rendered again.
 */
export function startChangeFeed(dbs: StoreDbs, now: number, keepMs: number): void {
  // nothing to number: the first import starts the feed (a write here would cost every fresh store a transaction)
  if (dbs.updates.getCount() === 0) return;
  if (dbs.meta.get(META.changeFeed) !== undefined) {
    rerenderChangeFeed(dbs, now, keepMs);
    return;
  }
  dbs.root.transactionSync(() => {
    if (dbs.meta.get(META.changeFeed) !== undefined) return;
    dbs.meta.putSync(META.servedRules, SERVED_RULES);
    const writer = new ChangeFeedWriter(dbs);
    for (const { key, value } of dbs.updates.getRange()) {
      const entry = { ...(value as UpdatesEntry) };
      delete entry.changeSeq;
      writer.record(key as string, undefined, entry);
      if (entry.changeSeq !== undefined) dbs.updates.putSync(key as string, entry);
    }
    writer.finish(now, keepMs);
  });
}

/**
 * Renders again, as one commit in key order, the rows of works whose served list older rules rendered otherwise;
 * then marks the store (only here and when a feed starts: a mark set by any commit could cover rows an older
 * program wrote). A store too full for it is left unmarked and serves the older rows until an open that can.
 */
function rerenderChangeFeed(dbs: StoreDbs, now: number, keepMs: number): void {
  const rendered = () => ((dbs.meta.get(META.servedRules) as number | undefined) ?? 1) >= SERVED_RULES;
  if (rendered()) return;
  try {
    dbs.root.transactionSync(() => {
      if (rendered()) return; // another process did it first
      const writer = new ChangeFeedWriter(dbs);
      let changed = false;
      for (const { key, value } of dbs.updates.getRange()) {
        const entry = { ...(value as UpdatesEntry) };
        if (!writer.rerender(key as string, entry)) continue;
        dbs.updates.putSync(key as string, entry);
        changed = true;
      }
      writer.finish(now, keepMs);
      if (changed) bumpUpdatesGen(dbs); // as after an import
      dbs.meta.putSync(META.servedRules, SERVED_RULES);
    });
  } catch (e) {
    // a full map or disk: nothing written; the next open tries again. Anything else is a bug: thrown.
    if (classifyStoreError(e, dbs.path).code === 'APPLY_FAILED') throw e;
  }
}
