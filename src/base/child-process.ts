import type { Level, Logger } from './log.ts';
import { selfCommand } from './worker-script.ts';

/**
 * This program again, as a process of lower priority that works beside the daemon: the update imports and
 * harvests (updates/following) and the push alerts' deliveries (webhooks). One mechanism for each end: the daemon
 * starts the process (startLowPriority), the process talks back (childSide). Messages go over Bun's IPC channel;
 * the child's log lines are the daemon's (`{ kind: 'log' }`, logged by the daemon's logger).
 */

/** How much CPU a child process yields: its nice value, and whether it runs under Linux's SCHED_IDLE policy. */
export type Priority = { nice: number; idle?: boolean };

/** A child's log line, relayed to the daemon's logger. */
export type ChildLog = { kind: 'log'; level: Level; event: string; fields?: Record<string, unknown> };

/**
 * The commands a child process is started under for its priority: `chrt --idle 0` (util-linux) when `idle`, then
 * `nice -n <nice>`. A SCHED_IDLE task gets the smallest share of the CPU, and the kernel preempts it at once for a
 * waking one: during a harvest the Updates API kept 0.73-0.94 of its rate at nice 19, 0.82-0.93 with SCHED_IDLE
 * too (bench/harvest.ts). Every thread the child starts inherits both. Where chrt cannot start a program under
 * SCHED_IDLE (missing, or the policy refused) the child runs at its nice value only, and `idleUnavailable` says so.
 */
export function priorityArgv(
  p: Priority,
  canIdle: () => boolean = idleSchedulingWorks,
): { argv: string[]; idleUnavailable?: true } {
  const idle = p.idle === true && canIdle();
  const argv = [...(idle ? ['chrt', '--idle', '0'] : []), ...(p.nice > 0 ? ['nice', '-n', String(p.nice)] : [])];
  return p.idle === true && !idle ? { argv, idleUnavailable: true } : { argv };
}

let idleProbe: boolean | undefined;
/** Whether `chrt --idle 0` starts a program here: tried once a process, so a chrt that fails cannot fail every start. */
export function idleSchedulingWorks(): boolean {
  if (idleProbe === undefined) {
    try {
      idleProbe =
        Bun.which('chrt') !== null &&
        Bun.spawnSync(['chrt', '--idle', '0', 'true'], { stdio: ['ignore', 'ignore', 'ignore'] }).exitCode === 0;
    } catch {
      idleProbe = false;
    }
  }
  return idleProbe;
}

/** said once a process: the fallback does not change between children */
let idleWarned = false;

export interface LowPriorityChild<ToChild> {
  /** sends while the channel is open; dropped after (the child is ending) */
  send(m: ToChild): void;
  /** closes the channel: the child ends once it sees it closed */
  disconnect(): void;
  /** the exit code, with the signal that ended it if one did */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** the command line, for messages */
  argv: string[];
  pid: number;
}

/**
 * Starts this program again with `arg` as its first argument, at a lower priority (priorityArgv), so that its work
 * never holds the thread that answers requests and, under load, the requests get the CPU first. A process, not a
 * worker thread: a thread's lower priority would pass to the threads it starts, and Bun's HTTP client thread and
 * lmdb-js's write thread are shared by the whole process. The child's log lines go to `log`; its other messages to
 * `onMessage`. Throws when the process cannot be started.
 */
export function startLowPriority<ToChild, FromChild>(opts: {
  arg: string;
  priority: Priority;
  /** what the process is called in messages ("harvest process") */
  name: string;
  log: Logger;
  onMessage: (m: FromChild) => void;
  command?: string[];
}): LowPriorityChild<ToChild> {
  const priority = priorityArgv(opts.priority);
  if (priority.idleUnavailable && !idleWarned) {
    idleWarned = true;
    opts.log.log('warn', 'import.idle_unavailable', {
      process: opts.name,
      message: `chrt --idle 0 (util-linux) cannot start a program here (not on the PATH, or the policy refused): the ${opts.name} runs at nice ${opts.priority.nice} only, not under SCHED_IDLE`,
    });
  }
  const argv = [...priority.argv, ...(opts.command ?? selfCommand()), opts.arg];
  let open = true; // the channel, until it is closed or the child exited
  const child = Bun.spawn(argv, {
    stdio: ['ignore', 'inherit', 'inherit'],
    ipc(m: FromChild | ChildLog) {
      if (typeof m === 'object' && m !== null && (m as ChildLog).kind === 'log') {
        const l = m as ChildLog;
        opts.log.log(l.level, l.event, l.fields);
      } else opts.onMessage(m as FromChild);
    },
  });
  return {
    send: (m) => {
      if (open) child.send(m);
    },
    disconnect: () => {
      if (!open) return;
      open = false;
      child.disconnect();
    },
    exited: child.exited.then((code) => {
      open = false;
      return { code, signal: child.signalCode === null ? null : String(child.signalCode) };
    }),
    argv,
    pid: child.pid,
  };
}

/**
 * The child's end of the channel: `send` to the daemon (a daemon gone is nobody to tell), a Logger whose lines the
 * daemon logs, and `stopping`, aborted by a SIGTERM, a SIGINT or the daemon closing the channel (or going away).
 * A SIGHUP is the daemon's reload, not the child's: it is ignored. `closed` settles when the channel closes; `stop`
 * aborts `stopping` too (a stop message).
 */
export function childSide<FromChild>(): {
  send: (m: FromChild) => void;
  log: Logger;
  stopping: AbortSignal;
  stop: () => void;
  closed: Promise<void>;
} {
  const send = (m: FromChild | ChildLog) => {
    try {
      process.send?.(m);
    } catch {
      // the daemon is gone: nobody to tell
    }
  };
  const log: Logger = {
    log: (level, event, fields) => send({ kind: 'log', level, event, ...(fields ? { fields } : {}) }),
  };
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  const closed = new Promise<void>((resolve) => process.once('disconnect', () => (stop(), resolve())));
  process.once('SIGTERM', stop).once('SIGINT', stop);
  process.on('SIGHUP', () => undefined);
  return { send, log, stopping: stopping.signal, stop, closed };
}
