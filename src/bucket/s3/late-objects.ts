import type { Logger } from '../../base/index.ts';
import { applyOrder } from '../../deposit/index.ts';
import type { MirrorObject } from './listing.ts';

/**
 * Objects that arrive late: one that sorts before an object already put in place (S3 stamps an upload when it
 * begins, so a long one shows in listings after the guard). If files of its platform after it were applied, the
 * store leaves them the DOIs they carry (docs/design.md, "Late files"), so replicas hold the same; said, for the
 * operator (s3.late_object).
 */
export class LateObjects {
  /** the newest (LastModified, key) put in place */
  private newest: { key: string; lastModified: number } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly env: string,
  ) {}

  /** An object put in place (or found in place at start). */
  noteInPlace(at: { key: string; lastModified: number }): void {
    if (!this.newest || applyOrder(at, this.newest) > 0) this.newest = at;
  }

  /** Says which of a round's objects, in apply order, came late. */
  sayLate(todo: readonly MirrorObject[]): void {
    const newest = this.newest;
    if (!newest) return;
    for (const o of todo) {
      if (applyOrder({ key: o.rel, lastModified: o.lastModified }, newest) >= 0) return; // sorted: the rest are later
      // key: as the ingestor and its file.applied lines name it
      const message =
        'listed after objects that sort after it were put in place: if files of its platform after it were applied, it applies as a late file (file.late)';
      this.log.log('info', 's3.late_object', {
        env: this.env,
        key: o.rel,
        lastModified: new Date(o.lastModified).toISOString(),
        after: newest.key,
        message,
      });
    }
  }
}
