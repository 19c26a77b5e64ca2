import type { FeedCursor } from './change-cursor.ts';
import { feedHead, type FeedHead } from './change-feed.ts';
import { readChanges, type ChangesPage, type CursorRefusal } from './change-page.ts';
import { META, type StoreDbs } from './environment.ts';
import { PrefixIndex, stampOf } from './prefix-index.ts';

/** The read side of a store's change feed: pages, the head, and the private lookup's index (docs/design.md, "Change feed"). */
export class ChangeFeedView {
  private prefixes: PrefixIndex | undefined;

  constructor(private readonly dbs: StoreDbs) {}

  /** The changes after `after` (from the start when undefined), at most `limit` works (change-page.ts). */
  changesAfter(after: FeedCursor | undefined, limit: number): ChangesPage | CursorRefusal {
    return readChanges(this.dbs, after, limit);
  }

  /**
   * Whether `cursorText` is the cursor of the feed's last change: then the page after it is empty and the cursor
   * comes back as it is (the empty poll's fast path; readChanges gives the same, test/store/change-feed.test.ts).
   */
  isTip(cursorText: string): boolean {
    return this.dbs.meta.get(META.changeFeedTip) === cursorText;
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
