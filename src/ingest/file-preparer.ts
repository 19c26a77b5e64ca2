import { workerScript } from '../base/index.ts';
import { prepareBucketFile } from './prepare.ts';
import type { PrepareReply, PrepareRequest } from './prepare-messages.ts';

type PrepareInput = Omit<PrepareRequest, 'id'>;

/** Read + hash + parse + encode of one bucket file: in a worker thread (the daemon) or inline (fallback). */
export interface FilePreparer {
  prepare(input: PrepareInput): Promise<PrepareReply>;
  close(): void;
}

export class InlinePreparer implements FilePreparer {
  prepare(input: PrepareInput): Promise<PrepareReply> {
    return prepareBucketFile({ ...input, id: 0 });
  }
  close(): void {}
}

/**
 * Hands files to one worker thread, in order; replies are matched by id. If the worker dies, the pending
 * requests fail over to inline preparation rather than hang.
 */
export class WorkerPreparer implements FilePreparer {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, { input: PrepareInput; resolve: (r: PrepareReply) => void }>();
  private broken = false;
  private readonly inline = new InlinePreparer();

  constructor(
    private readonly onFailure: (message: string) => void = () => {},
    /** the worker script (tests point it at one that fails) */
    script = workerScript('ingest/prepare-worker.ts'),
  ) {
    this.worker = new Worker(script);
    this.worker.onmessage = (event: MessageEvent<PrepareReply>) => {
      const w = this.waiting.get(event.data.id);
      if (!w) return;
      this.waiting.delete(event.data.id);
      w.resolve(event.data);
    };
    this.worker.onerror = (event) => {
      this.onFailure(event.message);
      this.failOver();
    };
    // an idle worker must not keep the process alive
    this.worker.unref();
  }

  /** requests handed to the worker and not answered yet */
  get inFlight(): number {
    return this.waiting.size;
  }

  prepare(input: PrepareInput): Promise<PrepareReply> {
    if (this.broken) return this.inline.prepare(input);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, { input, resolve });
      this.worker.postMessage({ ...input, id } satisfies PrepareRequest);
    });
  }

  private failOver(): void {
    this.broken = true;
    const pending = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of pending) void this.inline.prepare(w.input).then(w.resolve);
  }

  close(): void {
    this.broken = true;
    this.worker.terminate();
  }
}

/**
 * Several workers (`ingest.parseWorkers`): a backlog's files are read and parsed side by side, each handed to the
 * worker with the fewest waiting once the first has two; the ingestor takes the replies in its own order, so which worker parsed a file
 * changes nothing. Parsing is a sorted pass's first limit (docs/design.md, "A backlog in one sorted pass").
 */
/** files the first worker holds before another is started or given any */
const WORKER_DEPTH = 2;

/**
 * Several workers (`ingest.parseWorkers`): a backlog's files are read and parsed side by side, each handed to the
 * worker with the fewest waiting; the ingestor takes the replies in its own order, so which worker parsed a file
 * changes nothing. Parsing is a sorted pass's first limit (docs/design.md, "A backlog in one sorted pass"). Files
 * trickling in stay on the first worker, and the others start only when a backlog needs them: a worker costs its
 * start (its modules loaded, the record schema compiled), which slowed a daemon's first files by 5-10%
 * (bench/ingest-lmdb.ts, files one at a time) when every worker started with it.
 */
export class PreparerPool implements FilePreparer {
  private readonly workers: WorkerPreparer[] = [];

  constructor(
    private readonly size: number,
    private readonly make: () => WorkerPreparer,
  ) {
    this.workers.push(make());
  }

  prepare(input: PrepareInput): Promise<PrepareReply> {
    let best = this.workers[0]!;
    if (best.inFlight < WORKER_DEPTH) return best.prepare(input);
    for (const w of this.workers) if (w.inFlight < best.inFlight) best = w;
    if (best.inFlight > 0 && this.workers.length < this.size) this.workers.push((best = this.make()));
    return best.prepare(input);
  }

  close(): void {
    for (const w of this.workers) w.close();
  }
}
