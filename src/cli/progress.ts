/**
 * The progress line of long CLI work (--ingest of many files, --import-updates, --backup, --dump to a file): one
 * line on stderr rewritten in place at most 5 times a second, only when stderr is a terminal; nothing otherwise,
 * so logs and pipes get the report alone.
 */
export class Progress {
  /** the first update is shown whenever it comes (performance.now() counts from the process's start) */
  private shownAt = -Infinity;
  private shown = false;
  private readonly started = performance.now();

  constructor(
    private readonly onTty: boolean,
    private readonly write: (text: string) => void = (t) => process.stderr.write(t),
  ) {}

  /** `text` is called only when the line is due, so a caller may report on every item at no cost. */
  update(text: (seconds: string) => string): void {
    if (!this.onTty) return;
    const now = performance.now();
    if (now - this.shownAt < 200) return;
    this.shownAt = now;
    this.shown = true;
    // \x1b[K clears what a longer earlier line left
    this.write(`\r${text(((now - this.started) / 1000).toFixed(1))}\x1b[K`);
  }

  /** Ends the line, so the report printed next starts on its own. */
  done(): void {
    if (this.shown) this.write('\n');
    this.shown = false;
  }
}

/** Whether stderr is a terminal: the one place the CLI asks. */
export function stderrIsTty(): boolean {
  return process.stderr.isTTY === true;
}

/**
 * For commands whose stdout lines are themselves the progress (--dump, --ingest): a progress line only when stdout
 * goes elsewhere (a file, a pipe), so the line does not break into the output on the screen.
 */
export function outputElsewhere(): boolean {
  return stderrIsTty() && process.stdout.isTTY !== true;
}
