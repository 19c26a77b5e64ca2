import type { FeedCursor } from './change-cursor.ts';
import { feedHead, tipWrites, type FeedHead } from './change-feed.ts';
import { readChanges, type ChangesPage, type CursorRefusal } from './change-page.ts';
import { META, type StoreDbs } from './environment.ts';
import { PrefixIndex, stampOf } from './prefix-index.ts';

/** How long a tip read from the store is used before it is read again (isTip). */
const TIP_FRESH_MS = 25;

/** The read side of a store's change feed: pages, the head, and the private lookup's index (docs/design.md, "Change feed"). */
export class ChangeFeedView {
  private prefixes: PrefixIndex | undefined;
  /** the tip cursor as last read (null: none yet), and when; see isTip */
  private tip: string | null | undefined;
  private tipWritten = 0;
  private tipReadAt = 0;

  constructor(private readonly dbs: StoreDbs) {}

  /** The changes after `after` (from the start when undefined), at most `limit` works (change-page.ts). */
  changesAfter(after: FeedCursor | undefined, limit: number): ChangesPage | CursorRefusal {
    return readChanges(this.dbs, after, limit);
  }

  /**
   * Whether `cursorText` is the cursor of the feed's last change: then the page after it is empty and the cursor
   * comes back as it is (the empty poll's fast path; readChanges gives the same, test/store/change-feed.test.ts).
   * The tip is read again after a write by this process, else at most TIP_FRESH_MS old: reading it per poll was a
   * tenth of an empty poll's cost. Older, it can only make a poll after another process's commit look empty (the
   * same as asking a replica that is that far behind); the next poll gets the change.
   */
  isTip(cursorText: string): boolean {
    const now = performance.now();
    const written = tipWrites(this.dbs.path);
    if (this.tip === undefined || written !== this.tipWritten || now - this.tipReadAt > TIP_FRESH_MS) {
      this.tip = this.dbs.meta.get(META.changeFeedTip) ?? null;
      [this.tipWritten, this.tipReadAt] = [written, now];
    }
    return this.tip === cursorText;
  }

  head(): FeedHead {
    return feedHead(this.dbs);
  }

  /** The private lookup's index, rebuilt when the feed has moved since it was built. */
  prefixIndex(): PrefixIndex {
    if (!this.prefixes || this.prefixes.stamp !== stampOf(this.dbs)) this.prefixes = new PrefixIndex(this.dbs);
    return this.prefixes;
  }
}
