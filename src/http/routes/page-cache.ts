import { LruMap } from '../../base/index.ts';
import { doiKeysOf, type Store } from '../../store/index.ts';

/** A rendered status page (or its JSON) with its ETag, as the route sends it. */
export interface RenderedPage {
  body: Uint8Array;
  etag: string;
  /** every header of its answer (a Headers instance is copied into a Response faster than an object) */
  headers: Headers;
}

/** Per environment; an 11 KB page each, about 3,000 pages. */
export const PAGE_CACHE_MAX_BYTES = 32 * 1024 * 1024;
const ENTRY_OVERHEAD = 200;

/**
 * Rendered status pages of one store, so a page read often (a retracted paper linked from many places) is
 * rendered once per change, not once per reader. A deposit drops the pages of its DOIs (the store tells every
 * commit of this process); a commit by another process, a gap in the apply numbers or an update import empties
 * it. It serves and stores only while it is known to match the store's current read snapshot. Bounded in bytes,
 * the least recently used page going first.
 */
export class PageCache {
  private readonly pages = new LruMap<string, RenderedPage>();
  private bytes = 0;
  private seq: number;
  private updatesGen: number;

  constructor(
    private readonly store: Store,
    private readonly maxBytes = PAGE_CACHE_MAX_BYTES,
  ) {
    const stamp = store.changeStamp();
    this.seq = stamp.seq;
    this.updatesGen = stamp.updatesGen;
    store.onApplied((files) => {
      for (const f of files) {
        if (f.seq === this.seq + 1) for (const key of doiKeysOf(f)) this.dropDoi(key);
        else this.clear();
        this.seq = Math.max(this.seq, f.seq);
      }
    });
  }

  /**
   * Whether the cache matches the store now, emptying it first when an import or another process changed the
   * store. False while this process has a commit not yet told, or when the read snapshot is older than what the
   * cache was told: then a page must be rendered and not kept. Call it in the same turn as the render it guards.
   */
  usable(): boolean {
    const stamp = this.store.changeStamp();
    if (stamp.pending || stamp.seq < this.seq) return false;
    if (stamp.updatesGen !== this.updatesGen || stamp.seq !== this.seq) {
      this.clear();
      this.updatesGen = stamp.updatesGen;
      this.seq = stamp.seq;
    }
    return true;
  }

  get(key: string): RenderedPage | undefined {
    return this.pages.get(key);
  }

  set(key: string, page: RenderedPage): void {
    const size = page.body.length + key.length + ENTRY_OVERHEAD;
    if (size > this.maxBytes) return;
    this.delete(key);
    this.pages.set(key, page);
    this.bytes += size;
    while (this.bytes > this.maxBytes) this.delete(this.pages.oldest()!);
  }

  get size(): number {
    return this.pages.size;
  }

  private dropDoi(doiKey: string): void {
    for (const format of PAGE_FORMATS) this.delete(pageKey(format, doiKey));
  }

  private delete(key: string): void {
    const page = this.pages.peek(key);
    if (!page) return;
    this.pages.delete(key);
    this.bytes -= page.body.length + key.length + ENTRY_OVERHEAD;
  }

  private clear(): void {
    this.pages.clear();
    this.bytes = 0;
  }
}

const PAGE_FORMATS = ['html', 'json'] as const;
export type PageFormat = (typeof PAGE_FORMATS)[number];

/** The one key of a DOI's page in a format: what a deposit of the DOI drops. */
export function pageKey(format: PageFormat, doiKey: string): string {
  return `${format}\u0000${doiKey}`;
}
