import { type Clock, realClock, type TimerHandle } from './clock.ts';
import { ApiError, WriteFencedError } from './http.ts';
import { type Logger, silentLogger } from './logger.ts';

/** One Event write (a create, or a series patch) as the sink runs it. */
export interface EventWrite {
  /**
   * Writes with the same key run one at a time, in the order they were enqueued: a series patch must not reach the
   * apiserver before the create of the Event it patches (it would find nothing and create a duplicate).
   */
  key: string;
  /** What a failure log names: the regarding object and the Event's reason. Never the note, which may say anything. */
  regarding: string;
  reason: string;
  write: () => Promise<void>;
}

export interface EventSinkOptions {
  /** Writes waiting for a writer (in-flight ones not counted); a write enqueued beyond it is dropped. Default 1000. */
  capacity?: number;
  /** Writes in flight at once. Default 4. */
  concurrency?: number;
  logger?: Logger;
  /** Counted for each dropped write, e.g. the runtime_events_dropped_total Counter. */
  dropped?: { inc(): void };
  clock?: Clock;
}

/**
 * Records Events off the caller's path, as client-go's event broadcaster does: enqueue() returns at once, a few
 * writers drain a bounded queue, and a full queue drops (and counts) rather than slows a reconcile down. Events are
 * best effort: losing one must never fail or delay the work it describes.
 *
 * A failed write is logged and not retried. A retry would hold a writer while the apiserver is struggling (when the
 * queue most needs it), a refused Event (403, 422, a closed write fence) fails the same way again, and a condition
 * worth an Event is usually reported again by the next reconcile, which the series dedup folds into the same Event.
 */
export class EventSink {
  readonly #capacity: number;
  readonly #concurrency: number;
  readonly #log: Logger;
  readonly #droppedCounter: { inc(): void } | undefined;
  readonly #clock: Clock;
  readonly #queue: EventWrite[] = [];
  /** Keys with a write in flight: their next write waits (see EventWrite.key). */
  readonly #busy = new Set<string>();
  readonly #idleWaiters = new Set<() => void>();
  #active = 0;
  #dropped = 0;

  constructor(opts: EventSinkOptions = {}) {
    this.#capacity = opts.capacity ?? 1000;
    this.#concurrency = Math.max(1, opts.concurrency ?? 4);
    this.#log = opts.logger ?? silentLogger;
    this.#droppedCounter = opts.dropped;
    this.#clock = opts.clock ?? realClock;
  }

  /**
   * Queues the write and returns at once; false when the queue was full and the write was dropped. A free writer
   * starts it before this returns (so its request is on its way), but nothing here waits for the answer.
   */
  enqueue(item: EventWrite): boolean {
    if (this.#queue.length >= this.#capacity && !this.#canStart(item)) {
      this.#dropped++;
      this.#droppedCounter?.inc();
      return false;
    }
    this.#queue.push(item);
    this.#pump();
    return true;
  }

  /** Writes dropped because the queue was full, over the sink's life. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Writes queued or in flight. */
  get pending(): number {
    return this.#queue.length + this.#active;
  }

  /**
   * Resolves true once the queue is empty and every writer idle, false when `timeoutMs` passed first (the writes
   * left go on in the background). For shutdown: the Events a drained reconcile recorded reach the apiserver.
   */
  flush(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = (drained: boolean) => {
        this.#idleWaiters.delete(onIdle);
        if (timer) this.#clock.clearTimeout(timer);
        resolve(drained);
      };
      const onIdle = () => done(true);
      this.#idleWaiters.add(onIdle);
      timer = this.#clock.setTimeout(() => done(false), timeoutMs);
    });
  }

  /**
   * Whether a writer would take `item` at once. Then it does not wait, so a full queue does not refuse it: after each
   * pump either every writer is busy or no queued write can start, so `item` is the one a free writer takes.
   */
  #canStart(item: EventWrite): boolean {
    return this.#active < this.#concurrency && !this.#busy.has(item.key);
  }

  /** Starts queued writes while a writer is free and a write's key is not busy. */
  #pump(): void {
    while (this.#active < this.#concurrency) {
      const next = this.#takeRunnable();
      if (!next) return;
      void this.#run(next);
    }
  }

  /** The oldest queued write whose key has nothing in flight, taken off the queue. */
  #takeRunnable(): EventWrite | undefined {
    const index = this.#queue.findIndex((w) => !this.#busy.has(w.key));
    return index < 0 ? undefined : this.#queue.splice(index, 1)[0];
  }

  async #run(item: EventWrite): Promise<void> {
    this.#active++;
    this.#busy.add(item.key);
    try {
      await item.write();
    } catch (err) {
      this.#logFailure(item, err);
    } finally {
      this.#active--;
      this.#busy.delete(item.key);
      this.#pump();
      if (this.pending === 0) for (const wake of [...this.#idleWaiters]) wake();
    }
  }

  /** A fenced write (not the leader, e.g. during a handover) is expected and quiet; anything else is a warning. */
  #logFailure(item: EventWrite, err: unknown): void {
    const fields = { regarding: item.regarding, reason: item.reason, ...failureOf(err) };
    if (err instanceof WriteFencedError) this.#log.debug(fields, 'event not recorded: writes are fenced');
    else this.#log.warn(fields, 'could not record event');
  }
}

/**
 * What a log may say about a failed write. Not an ApiError's message: the apiserver's validation message can quote
 * the Event's fields back. Our own fence message names only the request, so it is kept.
 */
function failureOf(err: unknown): Record<string, unknown> {
  if (err instanceof ApiError) return { status: err.status, statusReason: err.reason };
  if (err instanceof WriteFencedError) return { error: err.message };
  const code = (err as { code?: unknown } | undefined)?.code;
  return { error: err instanceof Error ? err.name : typeof err, ...(code === undefined ? {} : { code }) };
}
