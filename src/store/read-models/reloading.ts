/** A value read from the store: the store's version, read before the value, and how long the read took. */
export interface StoreRead<T> {
  value: T;
  version: number | string;
  ms: number;
}

/** A read made on another thread (a worker); `cancel` ends it. */
type ReadElsewhere<T> = () => { done: Promise<StoreRead<T>>; cancel(): void };

/** What a read started by warm came to: how long it took, why it failed, or skipped (nothing to do). */
export type WarmRead = { ms: number } | { error: string } | { skipped: true };

/** A reload whose read took longer than this is read on another thread the next time. */
const SLOW_READ_MS = 50;
/**
 * A read elsewhere runs on a fresh worker, its code not yet compiled: about twice a read here (measured on 2,000
 * works: 22-27 ms there, 11-14 ms here). Its time is scaled by this before it is held against SLOW_READ_MS, so a
 * store read quickly here is not sent to a worker by its first read's time.
 */
const ELSEWHERE_COST = 2;

/**
 * A value read from the store and read again when the store's version moves: the Updates API's index and the
 * private lookup's. A read is made on this thread while reads are quick; once one took more than SLOW_READ_MS
 * (a harvest's hundreds of thousands of works take a second), the next is made elsewhere and the current value
 * answers until it lands, so requests never wait for a reload. A read elsewhere that fails is made here the
 * next time. The value of the latest read begun is kept, wherever it was made.
 */
export class Reloading<T> {
  private current: StoreRead<T> | undefined;
  private currentRead = 0;
  private reads = 0;
  private lastReadMs = 0;
  private elsewhere: { cancel(): void } | undefined;

  constructor(
    private readonly opts: {
      version: () => number | string;
      readHere: () => StoreRead<T>;
      /** none: always read here */
      readElsewhere?: ReadElsewhere<T>;
      slowMs?: number;
      /** a read elsewhere failed (the next is made here) */
      onFailed?: (error: string) => void;
    },
  ) {}

  /**
   * The value for the store's version now, or the last one while a read elsewhere runs. `force`: a moved store is
   * read here, now, even when reads go elsewhere (a caller that must see its own write).
   */
  get(force = false): T {
    const cur = this.current;
    if (cur && this.opts.version() === cur.version) return cur.value;
    const { readElsewhere, slowMs = SLOW_READ_MS } = this.opts;
    if (cur && !force && readElsewhere && this.lastReadMs > slowMs) {
      this.readThere(readElsewhere);
      return cur.value;
    }
    const here = this.opts.readHere();
    this.land(here, ++this.reads, here.ms);
    return this.current!.value;
  }

  /**
   * Starts the first read elsewhere, so that it need not be made here on first use (a daemon starting: a second
   * of a large store's read would hold its first request, and every other one). A get before it lands reads here.
   */
  warm(): Promise<WarmRead> {
    if (this.current || !this.opts.readElsewhere) return Promise.resolve({ skipped: true });
    return this.readThere(this.opts.readElsewhere);
  }

  /** Ends a read elsewhere (the store is closing). */
  close(): void {
    this.elsewhere?.cancel();
    this.elsewhere = undefined;
  }

  /** What became of the read started elsewhere (one already running: skipped). */
  private readThere(read: ReadElsewhere<T>): Promise<WarmRead> {
    if (this.elsewhere) return Promise.resolve({ skipped: true }); // when it lands, the next get sees whether the store moved on
    const n = ++this.reads;
    const job = read();
    this.elsewhere = job;
    return job.done
      .then(
        (r): WarmRead => {
          if (this.elsewhere === job) this.land(r, n, r.ms / ELSEWHERE_COST);
          return { ms: r.ms };
        },
        (e: unknown): WarmRead => {
          this.lastReadMs = 0; // read here next time; the current value answers meanwhile
          const error = e instanceof Error ? e.message : String(e);
          this.opts.onFailed?.(error);
          return { error };
        },
      )
      .finally(() => {
        if (this.elsewhere === job) this.elsewhere = undefined;
      });
  }

  /** `ms`: the read's time as if made here */
  private land(r: StoreRead<T>, n: number, ms: number): void {
    if (n < this.currentRead) return; // a read begun later (here, forced) landed first: it saw a newer store
    [this.current, this.currentRead, this.lastReadMs] = [r, n, ms];
  }
}
