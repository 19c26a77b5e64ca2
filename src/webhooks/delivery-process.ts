import { existsSync, readFileSync } from 'node:fs';
import {
  childSide,
  type Logger,
  type LowPriorityChild,
  type Priority,
  silentLogger,
  startLowPriority,
} from '../base/index.ts';
import type { EnvName } from '../config/index.ts';
import { Store } from '../store/index.ts';
import { Deliverer, type DeliveryRunner } from './deliverer.ts';
import type { DeliveryOutcome, DeliverySettings } from './deliveries.ts';
import { openWebhookDbs, type Subscription, type WebhookDbs } from './subscriptions-db.ts';

/** The first argument that makes this program the push alerts' delivery process instead of a command. */
export const DELIVERY_CHILD_ARG = '--webhooks-child';

/** Where the delivery process finds the webhooks' environment and the store whose change feed it follows. */
export interface DeliveryJob {
  path: string;
  mapSizeBytes: number;
  store: { dir: string; env: EnvName; mapSizeBytes: number; changeFeedKeepMs: number };
  /** everything of the settings but the functions (they cannot cross to another process) */
  settings: Omit<DeliverySettings, 'resolve'> & { pollMs: number; keepEventsMs: number };
}

/** How the daemon starts its delivery process. */
export interface DeliveryProcessSpec extends Priority {
  store: DeliveryJob['store'];
  log?: Logger;
  /** the program to start (tests start src/main.ts with bun); this program by default */
  command?: string[];
}

type ToDeliveryChild =
  | { kind: 'start'; job: DeliveryJob }
  | { kind: 'poll' }
  | { kind: 'wake'; ids: string[] }
  | { kind: 'sweep' };
type FromDeliveryChild =
  | { kind: 'ready' }
  | { kind: 'running' }
  | { kind: 'figures'; active: number; outcomes: [DeliveryOutcome, number][] }
  | { kind: 'paused'; subscription: Subscription }
  | { kind: 'error'; error: string };

/** how often the delivery process tells the daemon its figures, when they changed */
const FIGURES_EVERY_MS = 200;
/** a delivery process that ended on its own is started again after this, doubled up to RESTART_MAX_MS */
const RESTART_BASE_MS = 1_000;
const RESTART_MAX_MS = 60_000;

/**
 * The daemon's end of the delivery process: this program again (DELIVERY_CHILD_ARG), under SCHED_IDLE and nice
 * (startLowPriority), running the Deliverer. Following the feed, signing and sending each event and committing its
 * attempt cost CPU that the APIs' requests need more: at 50,000 deliveries in the daemon's own process the Updates API
 * kept 0.49-0.61 of its rate (bench/webhooks.ts). The routes stay in the daemon and share the webhooks' environment
 * with the process (both open it; LMDB allows it); a route that changes what should be delivered wakes the process
 * with a message. One that ends without being asked is started again, after a pause that doubles.
 */
export class DeliveryProcess implements DeliveryRunner {
  private child: LowPriorityChild<ToDeliveryChild> | undefined;
  private ready = false;
  private closing = false;
  private ended: Promise<unknown> = Promise.resolve();
  private restartTimer: Timer | undefined;
  private restartMs = RESTART_BASE_MS;
  private figures = { active: 0, outcomes: new Map<DeliveryOutcome, number>() };
  /** the outcomes of the processes that ended before this one */
  private readonly before = new Map<DeliveryOutcome, number>();
  private readonly log: Logger;
  private isRunning!: () => void;
  /** settles once the first delivery process read the feed */
  readonly running = new Promise<void>((resolve) => {
    this.isRunning = resolve;
  });

  constructor(
    private readonly spec: DeliveryProcessSpec,
    private readonly job: Omit<DeliveryJob, 'store'>,
    private readonly callbacks: { onPaused?: (s: Subscription) => void; onError?: (e: unknown) => void },
  ) {
    this.log = spec.log ?? silentLogger;
  }

  start(): void {
    if (this.closing) return;
    this.ready = false;
    let child: LowPriorityChild<ToDeliveryChild>;
    try {
      child = startLowPriority<ToDeliveryChild, FromDeliveryChild>({
        arg: DELIVERY_CHILD_ARG,
        priority: this.spec,
        name: 'delivery process',
        log: this.log,
        command: this.spec.command,
        onMessage: (m) => this.take(m),
      });
    } catch (e) {
      this.callbacks.onError?.(new Error(`the delivery process could not start: ${(e as Error).message}`));
      this.restartLater();
      return;
    }
    this.child = child;
    this.ended = child.exited.then(({ code, signal }) => {
      for (const [k, n] of this.figures.outcomes) this.before.set(k, (this.before.get(k) ?? 0) + n);
      this.figures = { active: 0, outcomes: new Map() };
      this.child = undefined;
      if (this.closing) return;
      this.callbacks.onError?.(
        new Error(
          `the delivery process (${child.argv.join(' ')}) ended (exit ${code}${signal ? `, ${signal}` : ''}); started again in ${this.restartMs} ms`,
        ),
      );
      this.restartLater();
    });
  }

  private restartLater(): void {
    this.restartTimer = setTimeout(() => this.start(), this.restartMs);
    this.restartMs = Math.min(RESTART_MAX_MS, this.restartMs * 2);
  }

  private take(m: FromDeliveryChild): void {
    if (m.kind === 'ready') {
      this.ready = true;
      this.child?.send({ kind: 'start', job: { ...this.job, store: this.spec.store } });
    } else if (m.kind === 'running') this.isRunning();
    else if (m.kind === 'figures') {
      this.figures = { active: m.active, outcomes: new Map(m.outcomes) };
      if (m.outcomes.length > 0) this.restartMs = RESTART_BASE_MS; // it delivers: a later end is a new story
    } else if (m.kind === 'paused') this.callbacks.onPaused?.(m.subscription);
    else this.callbacks.onError?.(new Error(m.error));
  }

  /** Messages before the process is ready are dropped: its start wakes every subscription and reads the feed. */
  private send(m: ToDeliveryChild): void {
    if (this.ready) this.child?.send(m);
  }

  poll(): void {
    this.send({ kind: 'poll' });
  }

  wake(ids: Iterable<string>): void {
    this.send({ kind: 'wake', ids: [...ids] });
  }

  sweep(): void {
    this.send({ kind: 'sweep' });
  }

  get active(): number {
    return this.figures.active;
  }

  get outcomes(): ReadonlyMap<DeliveryOutcome, number> {
    const all = new Map(this.before);
    for (const [k, n] of this.figures.outcomes) all.set(k, (all.get(k) ?? 0) + n);
    return all;
  }

  /**
   * Closes the channel: the process stops starting deliveries and ends once those in flight have (each within its
   * time-out). One that has not ended a few seconds after that is killed: what it had not recorded is sent again.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    child.disconnect();
    // a timer cleared once it ended: a pending sleep would hold the daemon's exit for its whole length
    const kill = setTimeout(() => process.kill(child.pid, 'SIGKILL'), this.job.settings.timeoutMs + 5_000);
    await this.ended;
    clearTimeout(kill);
  }
}

/**
 * The delivery process (DeliveryProcess starts it): says it is ready, takes its job, makes sure no other delivery
 * process of an earlier daemon still delivers from the same environment (one left by a daemon killed with SIGKILL
 * ends on its own once its deliveries in flight have, but a new one does not wait for it), then runs the Deliverer
 * until the daemon closes the channel, goes away, or sends SIGTERM. Returns the exit code.
 */
export async function runDeliveryChild(): Promise<number> {
  const { send, stopping, closed } = childSide<FromDeliveryChild>();
  let deliverer: Deliverer | undefined;
  let dbs: WebhookDbs | undefined;
  const job = await new Promise<DeliveryJob | undefined>((resolve) => {
    process.on('message', (m: ToDeliveryChild) => {
      if (m.kind === 'start') return resolve(m.job);
      if (!deliverer || !dbs) return;
      // the daemon committed what it tells of, but this turn's read transaction may predate that (lmdb-js renews
      // it once a turn, and many messages can come in one): it would show a resumed subscription still paused
      dbs.root.resetReadTxn();
      if (m.kind === 'poll') deliverer.poll();
      else if (m.kind === 'wake') deliverer.wake(m.ids);
      else deliverer.sweep();
    });
    void closed.then(() => resolve(undefined));
    send({ kind: 'ready' });
  });
  if (!job || stopping.aborted) return 1;
  const opened = openWebhookDbs(job.path, job.mapSizeBytes);
  dbs = opened;
  await takeOver(opened);
  const store = Store.open(job.store.dir, job.store.env, { ...job.store, readOnly: true });
  deliverer = new Deliverer(opened, store.changeFeed, {
    ...job.settings,
    onPaused: (subscription) => send({ kind: 'paused', subscription }),
    onError: (e) => send({ kind: 'error', error: String((e as Error)?.stack ?? e) }),
  });
  deliverer.start();
  send({ kind: 'running' });
  let told = '';
  const figures = setInterval(() => {
    if (!deliverer) return;
    const now = { kind: 'figures' as const, active: deliverer.active, outcomes: [...deliverer.outcomes] };
    const text = JSON.stringify(now);
    if (text !== told) send(now);
    told = text;
  }, FIGURES_EVERY_MS);
  await new Promise<void>((resolve) => stopping.addEventListener('abort', () => resolve(), { once: true }));
  await deliverer.close();
  clearInterval(figures);
  deliverer = undefined;
  opened.root.transactionSync(() => {
    if (opened.meta.get('deliverer') === process.pid) opened.meta.removeSync('deliverer'); // not a newer one's
  });
  await store.close();
  await opened.root.close();
  return 0;
}

/** Ends a delivery process another daemon left delivering from this environment, then records this one's pid. */
async function takeOver(dbs: WebhookDbs): Promise<void> {
  const earlier = dbs.meta.get('deliverer') as number | undefined;
  if (earlier !== undefined && earlier !== process.pid && isDeliveryProcess(earlier)) {
    process.kill(earlier, 'SIGTERM');
    for (let waited = 0; isDeliveryProcess(earlier); waited += 50) {
      if (waited === 15_000) process.kill(earlier, 'SIGKILL');
      await Bun.sleep(50);
    }
  }
  await dbs.meta.put('deliverer', process.pid);
}

/** Whether `pid` is a live delivery process (a pid reused by another program is not). */
function isDeliveryProcess(pid: number): boolean {
  const cmdline = `/proc/${pid}/cmdline`;
  try {
    return existsSync(cmdline) && readFileSync(cmdline, 'utf8').split('\0').includes(DELIVERY_CHILD_ARG);
  } catch {
    return false;
  }
}
