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
 * client-go's work queue semantics: a key waits at most once (dedup), is handed to at most one worker at a time,
 * and a key added while it is being processed is re-queued exactly once when that processing is done.
 */
export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #labels: { name: string; controller: string };
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #bucket: TokenBucket;

  #queue: string[] = [];
  #head = 0;
  readonly #dirty = new Set<string>();
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
    return this.#queue.length - this.#head;
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

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#metrics?.workqueueAdds.inc(this.#labels);
    this.#dirty.add(key);
    this.#addedAt.set(key, this.#clock.now());
    // A key being processed waits in `dirty` and is re-queued by done(): that is the single follow-up.
    if (this.#processing.has(key)) return;
    this.#push(key);
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
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#push(key);
    if (this.#processing.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Stops intake: pending and future get() calls return undefined; queued and delayed keys are dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { handle } of this.#delayed.values()) this.#clock.clearTimeout(handle);
    this.#delayed.clear();
    for (const g of this.#getters.splice(0)) this.#release(g, undefined);
    this.#queue = [];
    this.#head = 0;
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

  #push(key: string): void {
    const getter = this.#getters.shift();
    if (getter) {
      this.#take(key);
      this.#release(getter, key);
      return;
    }
    this.#queue.push(key);
    this.#metrics?.workqueueDepth.set(this.#labels, this.length);
  }

  #pop(): string | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const key = this.#queue[this.#head++]!;
    // Compact occasionally so a long-lived queue does not grow without bound.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#metrics?.workqueueDepth.set(this.#labels, this.length);
    this.#take(key);
    return key;
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
