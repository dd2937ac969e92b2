import { randomBytes } from 'node:crypto';
import { applyNeed } from './apply-skip.ts';
import type { InformerCache } from './cache.ts';
import { EventSink, type EventSinkOptions, type EventWrite } from './event-sink.ts';
import { ApiError, type DeleteOptions, type KubeHttp, type PatchType } from './http.ts';
import { EVENTS } from './kinds.ts';
import {
  type KubeObject,
  keyOf,
  type ObjectRef,
  type ResourceType,
  refOf,
  type Stored,
  type Writable,
} from './resource.ts';
import { microTime } from './time.ts';

export const eventsResource: ResourceType = EVENTS;

/**
 * The write lost a race with another writer; the reconcile should retry from a fresher cache. An ApiError with
 * status 409 and reason Conflict whatever the apiserver answered (a failed JSON-patch test comes back 422), so a
 * caller that asks `isStatus(err, 409)` treats every optimistic-concurrency loss alike; `cause` is the answer.
 */
export class ConflictError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super(409, '', '', { kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message });
    this.name = 'ConflictError';
    this.message = message;
    if (cause !== undefined) this.cause = cause;
  }
}

export interface EventInput {
  regarding: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

export interface ClientOptions {
  http: KubeHttp;
  /** Writes are fed back into this cache (read-your-writes). */
  cache?: InformerCache;
  /** Who owns the fields this client applies (server-side apply), e.g. the operator's name. */
  fieldManager: string;
  /** events.k8s.io reportingController, e.g. 'example.com/my-operator'. */
  reportingController?: string;
  reportingInstance?: string;
  /** Repeats of one event within this window bump its series instead of creating a new Event. */
  eventSeriesWindowMs?: number;
  /** The queue Event writes go through (capacity, writers, where failures are logged, the drop counter). */
  events?: EventSinkOptions;
  now?: () => Date;
}

/**
 * One recorded event's series. `last`/`observed`: the latest repeat (ms, and as a Date for the wire), set when the
 * repeat is recorded, not when its write runs. `patchQueued`: a series patch is queued and has not started yet.
 */
type SeenEvent = {
  name: string;
  namespace: string;
  count: number;
  last: number;
  observed: Date;
  patchQueued?: boolean;
};

/**
 * The writes a controller makes: server-side apply, status, finalizers with optimistic concurrency, events.
 * Every object the apiserver returns goes into the cache at once, so the next reconcile never acts on stale data.
 */
export class Client {
  readonly fieldManager: string;
  readonly #http: KubeHttp;
  readonly #cache: InformerCache | undefined;
  readonly #opts: ClientOptions;
  readonly #events = new Map<string, SeenEvent>();
  readonly #sink: EventSink;
  readonly #seriesWindowMs: number;
  readonly #now: () => Date;

  constructor(opts: ClientOptions) {
    this.#http = opts.http;
    this.#cache = opts.cache;
    this.#opts = opts;
    this.fieldManager = opts.fieldManager;
    this.#sink = new EventSink(opts.events);
    this.#seriesWindowMs = opts.eventSeriesWindowMs ?? 6 * 60_000;
    this.#now = opts.now ?? (() => new Date());
  }

  /** Throws WriteFencedError when this replica may no longer write (KubeHttp.assertMayWrite): for non-API writes. */
  assertMayWrite(what: string): void {
    this.#http.assertMayWrite(what);
  }

  /** Cached read (no API call); undefined when absent or not watched. */
  get<T extends Writable>(rt: ResourceType<T>, ref: ObjectRef): Stored<T> | undefined {
    return this.#cache?.get<Stored<T>>(rt, ref);
  }

  list<T extends Writable>(rt: ResourceType<T>): Stored<T>[] {
    return this.#cache?.storeFor<Stored<T>>(rt)?.list() ?? [];
  }

  /**
   * Server-side apply of the fields we own; `force` takes over fields another manager set. Not sent when the cache
   * shows it would change nothing (apply-skip.ts): the cached object is returned.
   */
  async apply<T extends Writable>(
    rt: ResourceType<T>,
    obj: T,
    opts: { force?: boolean } = {},
  ): Promise<Stored<T>> {
    const unchanged = this.#alreadyApplied(rt, obj, '');
    if (unchanged) return unchanged;
    const written = await this.#http.apply<Stored<T>>(rt, wire(obj), {
      fieldManager: this.fieldManager,
      force: opts.force ?? true,
    });
    return this.#remember(rt, written);
  }

  /** Creates an object (no apply): for objects that must be written once and never overwritten. */
  async create<T extends Writable>(rt: ResourceType<T>, obj: T): Promise<Stored<T>> {
    const written = await this.#http.create<Stored<T>>(rt, wire(obj) as Stored<T>, {
      fieldManager: this.fieldManager,
    });
    return this.#remember(rt, written);
  }

  /**
   * Server-side apply to the status subresource (`obj` holds the identity and the status); skipped, like apply(),
   * when it would change nothing.
   */
  async applyStatus<T extends Writable>(rt: ResourceType<T>, obj: Partial<T> & Writable): Promise<Stored<T>> {
    const unchanged = this.#alreadyApplied(rt, obj, 'status');
    if (unchanged) return unchanged;
    try {
      const written = await this.#http.apply<Stored<T>>(rt, wire(obj), {
        fieldManager: this.fieldManager,
        force: true,
        subresource: 'status',
      });
      return this.#remember(rt, written);
    } catch (err) {
      // Only an apply that carries a resourceVersion can lose a race: force settles field conflicts.
      if (err instanceof ApiError && err.status === 409) throw new ConflictError(err.message, err);
      throw err;
    }
  }

  async patchStatus<T extends Writable>(
    rt: ResourceType<T>,
    ref: ObjectRef,
    patch: unknown,
    type: PatchType = 'merge',
  ): Promise<Stored<T>> {
    const written = await this.#http.patch<Stored<T>>(rt, ref, patch, type, {
      subresource: 'status',
      fieldManager: this.fieldManager,
    });
    return this.#remember(rt, written);
  }

  async patch<T extends Writable>(
    rt: ResourceType<T>,
    ref: ObjectRef,
    patch: unknown,
    type: PatchType,
  ): Promise<Stored<T>> {
    const written = await this.#http.patch<Stored<T>>(rt, ref, patch, type, {
      fieldManager: this.fieldManager,
    });
    return this.#remember(rt, written);
  }

  /**
   * Adds a finalizer with a JSON patch guarded by a resourceVersion test, so it cannot clobber a concurrent change
   * to the list. No-op if present. Throws ConflictError when `obj` is stale.
   */
  async addFinalizer<T extends Writable>(
    rt: ResourceType<T>,
    obj: Stored<T>,
    finalizer: string,
  ): Promise<Stored<T>> {
    const finalizers = obj.metadata.finalizers;
    if (finalizers?.includes(finalizer)) return obj;
    const ops = [
      { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
      finalizers
        ? { op: 'add', path: '/metadata/finalizers/-', value: finalizer }
        : { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
    ];
    return this.#guardedPatch(rt, obj, ops);
  }

  /** Removes a finalizer under the same resourceVersion guard. No-op if absent. */
  async removeFinalizer<T extends Writable>(
    rt: ResourceType<T>,
    obj: Stored<T>,
    finalizer: string,
  ): Promise<Stored<T>> {
    const index = obj.metadata.finalizers?.indexOf(finalizer) ?? -1;
    if (index < 0) return obj;
    const ops = [
      { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
      { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
      { op: 'remove', path: `/metadata/finalizers/${index}` },
    ];
    return this.#guardedPatch(rt, obj, ops);
  }

  /**
   * Deletes with uid/resourceVersion preconditions. Returns false when the object was already gone. The cache
   * forgets the object at once unless finalizers keep it (then it caches the terminating object).
   */
  async delete(rt: ResourceType, ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    try {
      const response = (await this.#http.delete(rt, ref, opts)) as Partial<KubeObject> | undefined;
      const store = this.#cache?.storeForWrite(rt, { metadata: ref } as KubeObject);
      if (response?.metadata?.deletionTimestamp && response.metadata.finalizers?.length) {
        store?.applyOwnWrite(response as KubeObject);
      } else {
        store?.applyOwnDelete(keyOf(ref), response?.metadata?.resourceVersion);
      }
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      if (err instanceof ApiError && err.status === 409) throw new ConflictError(err.message, err);
      throw err;
    }
  }

  /**
   * Records an events.k8s.io/v1 Event without waiting for it: the write is queued (event-sink.ts) and the returned
   * promise is already resolved, so a reconcile never waits on an Event (nor fails because of one). A repeat of the
   * same (object, type, reason, action, note) within the series window patches the existing Event's series instead
   * of creating another object. flushEvents() waits for the queued writes.
   */
  async event(input: EventInput): Promise<void> {
    const now = this.#now();
    const key = dedupKeyOf(input);
    const seen = this.#events.get(key);
    if (seen && now.getTime() - seen.last < this.#seriesWindowMs) this.#repeatEvent(key, seen, input, now);
    else this.#firstEvent(key, input, now);
  }

  /** Resolves true once every queued Event write is done, false when `timeoutMs` passed first. */
  flushEvents(timeoutMs: number): Promise<boolean> {
    return this.#sink.flush(timeoutMs);
  }

  /** Event writes queued or in flight. */
  get pendingEvents(): number {
    return this.#sink.pending;
  }

  /** Event writes dropped because the queue was full. */
  get droppedEvents(): number {
    return this.#sink.dropped;
  }

  /**
   * The dedup entry goes in before the write is queued, so a repeat while this create is still in flight bumps the
   * series (the sink runs its patch after the create: same key) instead of creating a second Event.
   */
  #firstEvent(key: string, input: EventInput, now: Date): void {
    this.#pruneEvents(now.getTime());
    const namespace = input.regarding.metadata.namespace || 'default';
    const seen: SeenEvent = {
      name: eventName(input),
      namespace,
      count: 1,
      last: now.getTime(),
      observed: now,
    };
    this.#events.set(key, seen);
    const queued = this.#sink.enqueue(
      this.#eventWrite(key, input, () => this.#createEvent(seen, input, now)),
    );
    // Dropped: a repeat must create the Event, not patch one that never was.
    if (!queued) this.#events.delete(key);
  }

  /**
   * Bumps the series now; one queued patch carries every bump made before it starts (it reads the count when it
   * runs), so a burst of repeats costs one write, not one each.
   */
  #repeatEvent(key: string, seen: SeenEvent, input: EventInput, now: Date): void {
    seen.count++;
    seen.last = now.getTime();
    seen.observed = now;
    if (seen.patchQueued) return;
    // Set before enqueue: a free writer starts the patch inside enqueue(), and the patch clears the flag as it starts.
    seen.patchQueued = true;
    if (!this.#sink.enqueue(this.#eventWrite(key, input, () => this.#patchSeries(seen, input))))
      seen.patchQueued = false;
  }

  #eventWrite(key: string, input: EventInput, write: () => Promise<void>): EventWrite {
    const { kind, metadata } = input.regarding;
    const ref = metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
    return { key, regarding: `${kind ?? ''} ${ref}`.trim(), reason: input.reason, write };
  }

  async #patchSeries(seen: SeenEvent, input: EventInput): Promise<void> {
    seen.patchQueued = false;
    try {
      await this.#http.patch(
        eventsResource,
        { namespace: seen.namespace, name: seen.name },
        { series: { count: seen.count, lastObservedTime: microTime(seen.observed) } },
        'merge',
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      // The Event expired meanwhile (or its create failed): a fresh one starts a new series.
      seen.name = eventName(input);
      seen.count = 1;
      await this.#createEvent(seen, input, seen.observed);
    }
  }

  /** `eventTime`: when it first happened, not when the write runs (repeats may have come meanwhile). */
  async #createEvent(seen: SeenEvent, input: EventInput, eventTime: Date): Promise<void> {
    const { regarding } = input;
    await this.#http.create(eventsResource, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: seen.name, namespace: seen.namespace },
      eventTime: microTime(eventTime),
      type: input.type,
      reason: input.reason,
      action: input.action,
      note: input.note.slice(0, 1024),
      reportingController: this.#opts.reportingController ?? this.fieldManager,
      reportingInstance: this.#opts.reportingInstance ?? this.fieldManager,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: regarding.metadata.name,
        namespace: regarding.metadata.namespace,
        uid: regarding.metadata.uid,
        resourceVersion: regarding.metadata.resourceVersion,
      },
    } as KubeObject);
  }

  async #guardedPatch<T extends Writable>(
    rt: ResourceType<T>,
    obj: Stored<T>,
    ops: unknown[],
  ): Promise<Stored<T>> {
    try {
      const written = await this.#http.patch<Stored<T>>(rt, refOf(obj), ops, 'json', {
        fieldManager: this.fieldManager,
      });
      return this.#remember(rt, written);
    } catch (err) {
      // A failed JSON-patch test is answered 422 (Invalid); a changed object by 409.
      if (err instanceof ApiError && (err.status === 409 || err.status === 422))
        throw new ConflictError(err.message, err);
      throw err;
    }
  }

  /** The cached object when applying `obj` would change nothing in it (write-skipping, ADR 0007). */
  #alreadyApplied<T extends Writable>(
    rt: ResourceType<T>,
    obj: Writable,
    subresource: string,
  ): Stored<T> | undefined {
    const desired = wire(obj);
    const cached = this.#cache?.storeFor<Stored<T>>(rt)?.get(refOf(desired));
    return applyNeed(desired, cached, this.fieldManager, subresource) === undefined ? cached : undefined;
  }

  #remember<T extends KubeObject>(rt: ResourceType, written: T): T {
    this.#cache?.storeForWrite<T>(rt, written)?.applyOwnWrite(written);
    return written;
  }

  #pruneEvents(now: number): void {
    if (this.#events.size < 4096) return;
    for (const [key, seen] of this.#events)
      if (now - seen.last >= this.#seriesWindowMs) this.#events.delete(key);
  }
}

/**
 * The object as the transport takes it. Only `metadata.name`/`namespace` are read to route the request (a built
 * object may leave its metadata optional, as the V1* types do); the body is sent as it is.
 */
function wire(obj: Writable): KubeObject {
  return obj as KubeObject;
}

function dedupKeyOf(input: EventInput): string {
  return [input.regarding.metadata.uid, input.type, input.reason, input.action, input.note].join('\u0000');
}

function eventName(input: EventInput): string {
  return `${input.regarding.metadata.name}.${randomBytes(8).toString('hex')}`;
}
