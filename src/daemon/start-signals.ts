/** The signals a daemon acts on: SIGHUP reloads, SIGTERM and SIGINT stop. */
const DAEMON_SIGNALS = ['SIGHUP', 'SIGTERM', 'SIGINT'] as const;
export type DaemonSignal = (typeof DAEMON_SIGNALS)[number];

/** What start-up signals need of the process (a test passes a stand-in). */
interface SignalTarget {
  on(signal: DaemonSignal, listener: () => void): unknown;
  off(signal: DaemonSignal, listener: () => void): unknown;
  kill(pid: number, signal: DaemonSignal): unknown;
  readonly pid: number;
}

/**
 * Holds the daemon's signals from the program's first line until it knows what it runs. Loading the program
 * takes about 0.3 s, and without a listener SIGHUP ends the process: a `systemctl reload` just after `start`
 * would stop the service for good (systemd takes a SIGHUP death as a clean exit, Restart=on-failure does not fire).
 * The daemon takes what came meanwhile (handOver); any other command gets the default actions back (release).
 */
export class StartSignals {
  private readonly seen = new Set<DaemonSignal>();
  private readonly listeners = new Map<DaemonSignal, () => void>();

  constructor(private readonly target: SignalTarget) {
    for (const signal of DAEMON_SIGNALS) {
      const listener = () => void this.seen.add(signal);
      this.listeners.set(signal, listener);
      target.on(signal, listener);
    }
  }

  /** The daemon's own listeners are in place: stop holding, and say which signals came (each once). */
  handOver(): ReadonlySet<DaemonSignal> {
    this.stopHolding();
    return new Set(this.seen);
  }

  /**
   * Not the daemon (a CLI command, an import process): the default actions again, and a signal held meets its own.
   * One turn of the event loop first: in the compiled program, loading takes no turn, so a signal that came
   * meanwhile is still to be handed to these listeners, and would meet none after.
   */
  async release(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.stopHolding();
    for (const signal of this.seen) this.target.kill(this.target.pid, signal);
  }

  private stopHolding(): void {
    for (const [signal, listener] of this.listeners) this.target.off(signal, listener);
    this.listeners.clear();
  }
}
