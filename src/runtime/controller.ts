import type { InformerCache } from './cache.ts';
import { ConflictError } from './client.ts';
import { type Clock, realClock } from './clock.ts';
import { describeError } from './errors.ts';
import { type Logger, newReconcileID, reconcileLogger, silentLogger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import { WorkQueue, type WorkQueueOptions } from './queue.ts';
import {
  groupOfApiVersion,
  type KubeObject,
  keyOf,
  type ObjectRef,
  objectKey,
  parseKey,
  type ResourceType,
} from './resource.ts';
import type { Change } from './watcher.ts';

export type ReconcileRequest = ObjectRef;

export interface ReconcileContext {
  /** Aborted when this replica stops running workers (shutdown or lost leadership): stop writing. */
  signal: AbortSignal;
  log: Logger;
  reconcileID: string;
  /** How many times in a row this key has failed before this run. */
  retries: number;
}

export type ReconcileResult = { requeueAfter?: number; requeue?: boolean } | undefined;

export interface Reconciler {
  // biome-ignore lint/suspicious/noConfusingVoidType: lets `async reconcile() {}` implement it without a return.
  reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | void>;
}

export interface Watches {
  resource: ResourceType;
  /** Which primary objects a change to this object concerns. */
  map: (obj: KubeObject) => ObjectRef[];
}

export interface ControllerOptions {
  name: string;
  /** The primary resource: its keys are the queue's keys. */
  for: ResourceType;
  /** Resources owned by the primary (ownerReference with controller=true and the primary's kind). */
  owns?: ResourceType[];
  watches?: Watches[];
  reconciler: Reconciler;
  workers?: number;
  /** Every primary key is re-queued this often, from the cache (no API call). Default 10 min. */
  resyncPeriodMs?: number;
  /**
   * Keys queued with the primary's at start and at every resync although no primary of that key exists: what a
   * primary that is gone left for this controller to finish (an event on it may have come while it was not running).
   */
  orphanKeys?: () => ObjectRef[];
  /** Called after a reconcile threw, e.g. to set a status condition. Its own failures are logged, not raised. */
  onError?: (req: ReconcileRequest, err: unknown, ctx: ReconcileContext) => Promise<void> | void;
  queue?: Partial<Omit<WorkQueueOptions, 'name' | 'metrics'>>;
}

export interface ControllerDeps {
  cache: InformerCache;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
}

/** The keys of the controlling owners of `obj` that are of type `owner`. */
export function controllerOwnerRefs(obj: KubeObject, owner: ResourceType): ObjectRef[] {
  const refs = obj.metadata.ownerReferences ?? [];
  return refs
    .filter(
      (r) =>
        r.controller === true && r.kind === owner.kind && groupOfApiVersion(r.apiVersion) === owner.group,
    )
    .map((r) => ({ namespace: owner.namespaced ? (obj.metadata.namespace ?? '') : '', name: r.name }));
}

/**
 * Feeds a work queue from the primary and related watches and runs N workers over it. Workers run only between
 * startWorkers() and stopWorkers(), so a standby replica keeps a warm cache without reconciling.
 */
export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #opts: ControllerOptions;
  readonly #cache: InformerCache;
  readonly #log: Logger;
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #clock: Clock;
  /**
   * Primary keys this process has handed to a worker at least once (while the object is cached). A key not in it
   * waits in the queue's `first` lane: a new object's first reconcile (which creates its children) comes before
   * the re-reconciles its siblings' child events cause, so a burst of creations gets all its first waves out first.
   */
  readonly #reconciled = new Set<string>();
  #workers: Promise<void>[] = [];
  #workerStop: AbortController | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;

  constructor(opts: ControllerOptions, deps: ControllerDeps) {
    this.name = opts.name;
    this.#opts = opts;
    this.#cache = deps.cache;
    this.#log = (deps.logger ?? silentLogger).child({ controller: opts.name });
    this.#metrics = deps.metrics;
    this.#clock = deps.clock ?? realClock;
    this.queue = new WorkQueue({ name: opts.name, metrics: deps.metrics, clock: this.#clock, ...opts.queue });

    this.#cache.informerFor(opts.for).onChange((c) => {
      const key = objectKey(c.object);
      // A later object of the same name is a new object: its first reconcile goes first again.
      if (c.type === 'DELETED') this.#reconciled.delete(key);
      this.#enqueue([key]);
    });
    for (const owned of opts.owns ?? []) {
      this.#cache
        .informerFor(owned)
        .onChange((c) => this.#enqueue(mapChange(c, (o) => controllerOwnerRefs(o, opts.for))));
    }
    for (const w of opts.watches ?? []) {
      this.#cache.informerFor(w.resource).onChange((c) => this.#enqueue(mapChange(c, w.map)));
    }
  }

  get running(): boolean {
    return this.#workerStop !== undefined;
  }

  startWorkers(): void {
    if (this.#workerStop || this.queue.shuttingDown) return;
    const stop = new AbortController();
    this.#workerStop = stop;
    // Whatever changed while we were not running is covered by reconciling everything once.
    this.#enqueueAll();
    const count = Math.max(1, this.#opts.workers ?? 2);
    this.#workers = Array.from({ length: count }, () => this.#work(stop.signal));
    const period = this.#opts.resyncPeriodMs ?? 10 * 60_000;
    this.#resyncTimer = setInterval(() => this.#enqueueAll(), period);
    this.#resyncTimer.unref();
    this.#log.info({ workers: count }, 'workers started');
  }

  /**
   * Stops taking keys and waits up to `timeoutMs` for in-flight reconciles. Their signal aborts at once so they
   * can stop early. Returns false if some were still running at the deadline.
   */
  async stopWorkers(timeoutMs = 30_000): Promise<boolean> {
    const stop = this.#workerStop;
    if (!stop) return true;
    this.#workerStop = undefined;
    clearInterval(this.#resyncTimer);
    stop.abort();
    const workers = Promise.all(this.#workers).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = await Promise.race([workers, deadline]);
    clearTimeout(timer);
    this.#workers = [];
    this.#log.info({ drained }, 'workers stopped');
    return drained;
  }

  /** Stops intake for good and drains in-flight work. */
  async shutdown(timeoutMs = 30_000): Promise<boolean> {
    this.queue.shutDown();
    return this.stopWorkers(timeoutMs);
  }

  #enqueue(keys: string[]): void {
    if (!this.#workerStop) return;
    for (const key of keys) this.queue.add(key, { lane: this.#reconciled.has(key) ? 'rest' : 'first' });
  }

  #enqueueAll(): void {
    const store = this.#cache.storeFor(this.#opts.for);
    if (store) this.#enqueue(store.keys());
    if (this.#opts.orphanKeys) this.#enqueue(this.#opts.orphanKeys().map(keyOf));
  }

  async #work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get(signal);
      if (key === undefined) return;
      // Only while cached: a key whose object is gone would otherwise stay in the set for good.
      if (this.#cache.storeFor(this.#opts.for)?.get(key)) this.#reconciled.add(key);
      try {
        await this.#reconcile(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #reconcile(key: string, signal: AbortSignal): Promise<void> {
    const req = parseKey(key);
    const reconcileID = newReconcileID();
    const ctx: ReconcileContext = {
      signal,
      reconcileID,
      retries: this.queue.numRequeues(key),
      log: reconcileLogger(this.#log, { controller: this.name, ...req, reconcileID }),
    };
    const started = this.#clock.now();
    const labels = { controller: this.name };
    try {
      const result = (await this.#opts.reconciler.reconcile(req, ctx)) ?? undefined;
      if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfter);
        this.#metrics?.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        this.#metrics?.reconcileTotal.inc({ ...labels, result: 'requeue' });
      } else {
        this.queue.forget(key);
        this.#metrics?.reconcileTotal.inc({ ...labels, result: 'success' });
      }
    } catch (err) {
      if (err instanceof ConflictError) {
        // A write guarded by what this reconcile read lost to a newer object: not a failure, the next run reads it.
        const delay = this.queue.addRateLimited(key);
        this.#metrics?.reconcileTotal.inc({ ...labels, result: 'conflict' });
        ctx.log.info(
          { err: describeError(err), retryInMs: Math.round(delay) },
          'stale read; reconciling again',
        );
        return;
      }
      this.#metrics?.reconcileErrors.inc(labels);
      this.#metrics?.reconcileTotal.inc({ ...labels, result: 'error' });
      const delay = this.queue.addRateLimited(key);
      ctx.log.error({ err: describeError(err), retryInMs: Math.round(delay) }, 'reconcile failed');
      if (this.#opts.onError) {
        try {
          await this.#opts.onError(req, err, ctx);
        } catch (hookErr) {
          ctx.log.error({ err: describeError(hookErr) }, 'onError hook failed');
        }
      }
    } finally {
      this.#metrics?.reconcileTime.observe(labels, (this.#clock.now() - started) / 1000);
    }
  }
}

function mapChange(change: Change<KubeObject>, map: (obj: KubeObject) => ObjectRef[]): string[] {
  const refs = map(change.object);
  if (change.old) refs.push(...map(change.old));
  return [...new Set(refs.map(keyOf))];
}
