import { exponentialDelay } from './backoff.ts';
import { type Clock, realClock, type TimerHandle } from './clock.ts';
import type { RuntimeMetrics } from './metrics.ts';

export interface WorkQueueOptions {
  name: string;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  /** Per-key exponential backoff, client-go's ItemExponentialFailureRateLimiter defaults: 5 ms → 1000 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Overall token bucket for rate-limited re-adds, client-go's BucketRateLimiter defaults: 10 qps, burst 100. */
  qps?: number;
  burst?: number;
}

/** Token bucket that hands out reservations: the delay until the reserved token exists (golang.org/x/time/rate). */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, clock: Clock) {
    this.#qps = qps;
    this.#burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  reserve(): number {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }
}

type Getter = { resolve: (key: string | undefined) => void; signal?: AbortSignal; onAbort?: () => void };

/**
 * Which line a waiting key stands in. `first` is served before `rest` (strictly: a `rest` key is handed out only
 * when no `first` key waits), for the first reconcile of objects this process has never reconciled: 500 objects
 * created at once should each get their children before any of them is re-reconciled for its children's events.
 * The lane only orders waiting keys; dedup, one worker per key, delays and rate limiting are the same in both.
 */
export type Lane = 'first' | 'rest';

export interface AddOptions {
  /** Default `rest`. A key already waiting in `rest` moves to `first`; a `first` key never moves back. */
  lane?: Lane;
}

/**
 * client-go's work queue semantics: a key waits at most once (dedup), is handed to at most one worker at a time,
 * and a key added while it is being processed is re-queued exactly once when that processing is done. Two lanes
 * order the waiting keys ({@link Lane}); within a lane, first in first out.
 */
export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #labels: { name: string; controller: string };
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #bucket: TokenBucket;

  readonly #lanes = { first: new Fifo(), rest: new Fifo() };
  /** Keys waiting or to be re-queued once processed, with their lane. */
  readonly #dirty = new Map<string, Lane>();
  /** Keys in a lane's FIFO, with that lane (a key promoted to `first` leaves a stale entry in `rest`, skipped). */
  readonly #queued = new Map<string, Lane>();
  readonly #processing = new Set<string>();
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  readonly #delayed = new Map<string, { at: number; handle: TimerHandle; retry: boolean }>();
  readonly #failures = new Map<string, number>();
  readonly #getters: Getter[] = [];
  readonly #idleWaiters: (() => void)[] = [];
  #shuttingDown = false;

  constructor(opts: WorkQueueOptions) {
    this.name = opts.name;
    this.#clock = opts.clock ?? realClock;
    this.#metrics = opts.metrics;
    this.#labels = { name: opts.name, controller: opts.name };
    // A queue's depth exists from its start, as in client-go: a queue whose idle workers take every key straight
    // from add() never backs up, and a dashboard or alert must still see 0 rather than no series.
    this.#metrics?.workqueueDepth.set(this.#labels, 0);
    this.#baseDelayMs = opts.baseDelayMs ?? 5;
    this.#maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.#bucket = new TokenBucket(opts.qps ?? 10, opts.burst ?? 100, this.#clock);
  }

  get length(): number {
    return this.#queued.size;
  }

  get processingCount(): number {
    return this.#processing.size;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  isProcessing(key: string): boolean {
    return this.#processing.has(key);
  }

  add(key: string, opts: AddOptions = {}): void {
    if (this.#shuttingDown) return;
    const lane = opts.lane ?? 'rest';
    const waiting = this.#dirty.get(key);
    if (waiting !== undefined) {
      if (waiting === 'rest' && lane === 'first') this.#promote(key);
      return;
    }
    this.#metrics?.workqueueAdds.inc(this.#labels);
    this.#dirty.set(key, lane);
    this.#addedAt.set(key, this.#clock.now());
    // A key being processed waits in `dirty` and is re-queued by done(): that is the single follow-up.
    if (this.#processing.has(key)) return;
    this.#push(key, lane);
  }

  #promote(key: string): void {
    this.#dirty.set(key, 'first');
    if (this.#queued.get(key) !== 'rest') return;
    this.#queued.set(key, 'first');
    this.#lanes.first.push(key);
  }

  addAfter(key: string, delayMs: number): void {
    this.#schedule(key, delayMs, false);
  }

  /** Re-adds after max(per-key exponential backoff, overall token bucket delay). */
  addRateLimited(key: string): number {
    const delay = Math.max(this.#itemDelay(key), this.#bucket.reserve());
    this.#metrics?.workqueueRetries.inc(this.#labels);
    this.#schedule(key, delay, true);
    return delay;
  }

  /**
   * Clears the failure history of a key, so its next failure starts from the base delay again, and cancels a
   * pending failure retry: the key just succeeded, so that retry would only repeat work (client-go lets it fire).
   * A delay asked for with addAfter (requeueAfter) stays.
   */
  forget(key: string): void {
    this.#failures.delete(key);
    const pending = this.#delayed.get(key);
    if (pending?.retry) {
      this.#clock.clearTimeout(pending.handle);
      this.#delayed.delete(key);
    }
  }

  #schedule(key: string, delayMs: number, retry: boolean): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) {
      // The earlier timer covers this request too; it now also serves an explicit requeue if this is one.
      if (!retry) pending.retry = false;
      return;
    }
    if (pending) this.#clock.clearTimeout(pending.handle);
    const handle = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.#delayed.set(key, { at, handle, retry });
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Next key to process, or undefined once shut down or when `signal` aborts (the worker should then exit). */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.#pop();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => {
      const getter: Getter = { resolve, signal };
      if (signal) {
        getter.onAbort = () => {
          const i = this.#getters.indexOf(getter);
          if (i >= 0) this.#getters.splice(i, 1);
          resolve(undefined);
        };
        signal.addEventListener('abort', getter.onAbort, { once: true });
      }
      this.#getters.push(getter);
    });
  }

  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) {
      this.#metrics?.workqueueWorkDuration.observe(this.#labels, (this.#clock.now() - started) / 1000);
    }
    const lane = this.#dirty.get(key);
    if (lane !== undefined && !this.#shuttingDown) this.#push(key, lane);
    if (this.#processing.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Stops intake: pending and future get() calls return undefined; queued and delayed keys are dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { handle } of this.#delayed.values()) this.#clock.clearTimeout(handle);
    this.#delayed.clear();
    for (const g of this.#getters.splice(0)) this.#release(g, undefined);
    this.#lanes.first.clear();
    this.#lanes.rest.clear();
    this.#queued.clear();
    this.#metrics?.workqueueDepth.set(this.#labels, 0);
  }

  /** Resolves when no key is being processed. */
  whenIdle(): Promise<void> {
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #itemDelay(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return exponentialDelay(failures, { initialMs: this.#baseDelayMs, maxMs: this.#maxDelayMs, factor: 2 });
  }

  #push(key: string, lane: Lane): void {
    const getter = this.#getters.shift();
    if (getter) {
      this.#take(key);
      this.#release(getter, key);
      return;
    }
    this.#queued.set(key, lane);
    this.#lanes[lane].push(key);
    this.#metrics?.workqueueDepth.set(this.#labels, this.length);
  }

  #pop(): string | undefined {
    const key = this.#shift('first') ?? this.#shift('rest');
    if (key === undefined) return undefined;
    this.#queued.delete(key);
    this.#metrics?.workqueueDepth.set(this.#labels, this.length);
    this.#take(key);
    return key;
  }

  /** The lane's next key that is still queued in it (entries left behind by a promotion are skipped). */
  #shift(lane: Lane): string | undefined {
    for (;;) {
      const key = this.#lanes[lane].shift();
      if (key === undefined || this.#queued.get(key) === lane) return key;
    }
  }

  #take(key: string): void {
    const now = this.#clock.now();
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined)
      this.#metrics?.workqueueQueueDuration.observe(this.#labels, (now - added) / 1000);
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#startedAt.set(key, now);
  }

  #release(getter: Getter, key: string | undefined): void {
    if (getter.onAbort) getter.signal?.removeEventListener('abort', getter.onAbort);
    getter.resolve(key);
  }
}

/** An array-backed FIFO that compacts occasionally, so a long-lived queue does not grow without bound. */
class Fifo {
  #items: string[] = [];
  #head = 0;

  push(item: string): void {
    this.#items.push(item);
  }

  shift(): string | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
