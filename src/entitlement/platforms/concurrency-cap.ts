/**
 * A concurrency cap: at most `size` holders at once; others wait in order, each only until its deadline (a call
 * that could not start in time is a time-out, never a late answer).
 */
export class ConcurrencyCap {
  private held = 0;
  private readonly waiting: { grant: (ok: boolean) => void; timer: Timer }[] = [];

  constructor(private readonly size: number) {}

  get inUse(): number {
    return this.held;
  }

  async acquire(deadline: number, now: () => number): Promise<boolean> {
    if (this.held < this.size) {
      this.held++;
      return true;
    }
    const wait = deadline - now();
    if (wait <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve(false);
        }, wait),
      };
      this.waiting.push(waiter);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant(true); // the slot passes straight to the next waiter
    } else this.held--;
  }
}
