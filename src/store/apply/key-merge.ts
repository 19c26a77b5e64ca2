/** A reader of records in key order: `key` is the current record's key after next() returned true. */
export interface KeyedCursor {
  key: Uint8Array;
  next(): boolean;
}

/**
 * Visits the records of sorted cursors in key order, records of one key in the cursors' order (a binary heap by
 * (key, cursor index)): the one merge of a pass (apply-records.ts) and of a sorted pass's runs (sorted-pass/).
 * `visit` gets the index of the cursor whose record is current; it must not move that cursor. Returning false
 * stops the merge before that record: the next run() visits it first.
 */
export class KeyMerge<C extends KeyedCursor> {
  private readonly heap: number[] = [];
  private started = false;

  constructor(readonly cursors: readonly C[]) {}

  /** Visits records until they run out (true) or `visit` returns false (false). */
  // biome-ignore lint/suspicious/noConfusingVoidType: a visitor that returns nothing goes on (its callers' lambdas return void)
  run(visit: (i: number) => boolean | void): boolean {
    const { heap, cursors } = this;
    if (!this.started) {
      this.started = true;
      cursors.forEach((c, i) => c.next() && heap.push(i));
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) this.down(i);
    }
    while (heap.length > 0) {
      const i = heap[0]!;
      if (visit(i) === false) return false;
      if (!cursors[i]!.next()) {
        const last = heap.pop()!;
        if (heap.length === 0) break;
        heap[0] = last;
      }
      this.down(0);
    }
    return true;
  }

  private before(a: number, b: number): boolean {
    const c = Buffer.compare(this.cursors[a]!.key, this.cursors[b]!.key);
    return c < 0 || (c === 0 && a < b);
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && this.before(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      const t = heap[i]!;
      heap[i] = heap[m]!;
      heap[m] = t;
      i = m;
    }
  }
}
