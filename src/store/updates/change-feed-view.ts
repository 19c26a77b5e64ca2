import { META, type StoreDbs } from '../environment/index.ts';
import { Reloading, type StoreLocation, type StoreRead, storeReadJob, type WarmRead } from '../read-models/index.ts';
import type { FeedCursor } from './change-cursor.ts';
import { type FeedHead, feedHead, tipWrites } from './change-feed.ts';
import { type ChangesPage, type CursorRefusal, readChanges } from './change-page.ts';
import { PrefixIndex, type PrefixParts, readPrefixParts, stampOf } from './prefix-index.ts';

/** How long a tip read from the store is used before it is read again (isTip). */
const TIP_FRESH_MS = 25;

/** The read side of a store's change feed: pages, the head, and the private lookup's index (docs/design.md, "Change feed"). */
export class ChangeFeedView {
  private readonly prefixes: Reloading<PrefixIndex>;
  /** the tip cursor as last read (null: none yet), and when; see isTip */
  private tip: string | null | undefined;
  private tipWritten = 0;
  private tipReadAt = 0;

  /** `where`: a slow read of the private lookup's index is made on a worker thread, opening the store there; `onFailed`: such a read failed */
  constructor(
    private readonly dbs: StoreDbs,
    where?: StoreLocation,
    onFailed?: (error: string) => void,
  ) {
    const asIndex = (r: StoreRead<PrefixParts>): StoreRead<PrefixIndex> => ({ ...r, value: new PrefixIndex(r.value) });
    this.prefixes = new Reloading({
      version: () => stampOf(dbs),
      readHere: () => asIndex(readPrefixParts(dbs)),
      readElsewhere:
        where &&
        (() => {
          const job = storeReadJob<StoreRead<PrefixParts>>({ kind: 'prefixes', ...where }, 'the prefix index worker');
          return { done: job.done.then(asIndex), cancel: job.cancel };
        }),
      onFailed,
    });
  }

  /** The changes after `after` (from the start when undefined), at most `limit` works (change-page.ts). */
  changesAfter(after: FeedCursor | undefined, limit: number): ChangesPage | CursorRefusal {
    return readChanges(this.dbs, after, limit);
  }

  /**
   * Whether `cursorText` is the cursor of the feed's last change: then the page after it is empty and the cursor
   * comes back as it is (the empty poll's fast path; readChanges gives the same, test/store/updates/change-feed.test.ts).
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

  /**
   * The private lookup's index, read again when the feed has moved since: here while that is quick, else on a
   * worker while the last index answers (Reloading), as from a replica that far behind.
   */
  prefixIndex(): PrefixIndex {
    return this.prefixes.get();
  }

  /** Starts reading the private lookup's index on a worker (a daemon starting: Reloading.warm). */
  warm(): Promise<WarmRead> {
    return this.prefixes.warm();
  }

  /** Ends a read on another thread (the store is closing). */
  close(): void {
    this.prefixes.close();
  }
}
