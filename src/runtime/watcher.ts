import { Backoff, type BackoffOptions } from './backoff.ts';
import { realClock, sleep } from './clock.ts';
import { objectOf } from './compact.ts';
import { describeError } from './errors.ts';
import { ApiError, isStatus, type KubeHttp, type ListResult } from './http.ts';
import { type Logger, silentLogger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import { compareResourceVersions, type KubeObject, objectKey, type ResourceType } from './resource.ts';
import { byNamespace, Store, type StoreOptions } from './store.ts';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface Change<T> {
  type: ChangeType;
  object: T;
  /** The cached version before a MODIFIED change. */
  old?: T;
}
export type ChangeHandler<T> = (change: Change<T>) => void;

export interface RelistDiff<T> {
  added: T[];
  modified: { old: T; object: T }[];
  deleted: T[];
}

/**
 * What changed between the cache and a fresh LIST. Objects missing from the list were deleted while we were not
 * watching (the watch was too old: 410 Gone); without this diff those deletes would be lost. A listed object older
 * than the cached one is a write of our own the list predates, so it is kept.
 */
export function diffRelist<T extends KubeObject>(
  known: Iterable<[string, T]>,
  listed: readonly T[],
): RelistDiff<T> {
  const listedByKey = new Map<string, T>();
  for (const obj of listed) listedByKey.set(objectKey(obj), obj);
  const diff: RelistDiff<T> = { added: [], modified: [], deleted: [] };
  const seen = new Set<string>();
  for (const [key, old] of known) {
    seen.add(key);
    const object = listedByKey.get(key);
    if (!object) {
      diff.deleted.push(old);
      continue;
    }
    const recreated = old.metadata.uid !== undefined && object.metadata.uid !== old.metadata.uid;
    const order = compareResourceVersions(object.metadata.resourceVersion, old.metadata.resourceVersion);
    if (recreated) {
      diff.deleted.push(old);
      diff.added.push(object);
    } else if (
      order === undefined ? object.metadata.resourceVersion !== old.metadata.resourceVersion : order > 0
    ) {
      diff.modified.push({ old, object });
    }
  }
  for (const [key, object] of listedByKey) if (!seen.has(key)) diff.added.push(object);
  return diff;
}

export interface WatcherOptions<T extends KubeObject> {
  http: KubeHttp;
  resource: ResourceType;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  store?: Store<T>;
  storeOptions?: StoreOptions<T>;
  /** LIST page size. */
  pageSize?: number;
  /** Server-side watch timeout; defaults to a random 240–300 s so a fleet does not reconnect in lockstep. */
  timeoutSeconds?: number;
  /**
   * Silence (no event, no bookmark, no response) longer than this means the watch is stalled: it is aborted and
   * restarted. Default: timeoutSeconds + 30 s, since the server promised to close the watch by timeoutSeconds.
   */
  stallTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  logger?: Logger;
  metrics?: RuntimeMetrics;
}

class StallError extends Error {}
class GoneError extends Error {}

/**
 * LIST+WATCH loop feeding a Store (a reflector): resumes from the last seen resourceVersion, relists on 410 Gone,
 * aborts silent watches, and backs off with jitter on errors. It never gives up while started.
 */
export class Watcher<T extends KubeObject> {
  readonly store: Store<T>;
  readonly resource: ResourceType;
  readonly #opts: WatcherOptions<T>;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #handlers = new Set<ChangeHandler<T>>();
  readonly #syncWaiters = new Set<() => void>();
  readonly #timeoutSeconds: number;
  readonly #stallTimeoutMs: number;
  #resourceVersion: string | undefined;
  #synced = false;
  #stalled = false;
  #lastError: unknown;
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(opts: WatcherOptions<T>) {
    this.#opts = opts;
    this.resource = opts.resource;
    this.store = opts.store ?? new Store<T>(opts.storeOptions);
    this.#log = (opts.logger ?? silentLogger).child({ watch: opts.resource.plural });
    this.#backoff = new Backoff(opts.backoff);
    this.#timeoutSeconds = opts.timeoutSeconds ?? 240 + Math.floor(Math.random() * 60);
    this.#stallTimeoutMs = opts.stallTimeoutMs ?? (this.#timeoutSeconds + 30) * 1000;
  }

  /** True once the first LIST has been applied; stays true across restarts (the cache stays usable). */
  get synced(): boolean {
    return this.#synced;
  }

  /** True from a detected stall until the next watch connects. */
  get stalled(): boolean {
    return this.#stalled;
  }

  get lastError(): unknown {
    return this.#lastError;
  }

  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  onChange(handler: ChangeHandler<T>): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    this.#loop = this.#run(this.#stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#loop = undefined;
    for (const wake of this.#syncWaiters) wake();
  }

  /** Resolves true when synced, false if `signal` aborts or the watcher stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        this.#syncWaiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve(this.#synced);
      };
      this.#syncWaiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  async #run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      try {
        if (this.#resourceVersion === undefined) await this.#relist(stop);
        await this.#watch(stop);
        this.#opts.metrics?.watchRestarts.inc({ resource: this.resource.plural, reason: 'closed' });
      } catch (err) {
        if (stop.aborted) break;
        this.#lastError = err;
        if (err instanceof GoneError || isStatus(err, 410)) {
          this.#log.info(
            { resourceVersion: this.#resourceVersion },
            'watch resourceVersion expired; relisting',
          );
          this.#opts.metrics?.watchRestarts.inc({ resource: this.resource.plural, reason: 'gone' });
          this.#resourceVersion = undefined;
          continue;
        }
        const delay = this.#backoff.next();
        if (err instanceof StallError) {
          this.#log.warn({ silenceMs: this.#stallTimeoutMs }, 'watch stalled; restarting');
          this.#opts.metrics?.watchRestarts.inc({ resource: this.resource.plural, reason: 'stall' });
        } else {
          this.#log.warn({ err: describeError(err), retryInMs: Math.round(delay) }, 'watch failed; retrying');
          this.#opts.metrics?.watchRestarts.inc({ resource: this.resource.plural, reason: 'error' });
        }
        await sleep(realClock, delay, stop);
      }
    }
  }

  async #relist(stop: AbortSignal): Promise<void> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    do {
      let page: ListResult<T>;
      try {
        page = await this.#withStallBound(stop, (signal) =>
          this.#opts.http.list<T>(this.resource, {
            namespace: this.#opts.namespace,
            labelSelector: this.#opts.labelSelector,
            fieldSelector: this.#opts.fieldSelector,
            limit: this.#opts.pageSize ?? 500,
            continue: continueToken,
            signal,
          }),
        );
      } catch (err) {
        // An expired continue token means the snapshot is gone: start the list over.
        if (continueToken && isStatus(err, 410)) {
          items.length = 0;
          continueToken = undefined;
          continue;
        }
        throw err;
      }
      for (const item of page.items) items.push(withTypeMeta(item, this.resource));
      resourceVersion = page.metadata.resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken);

    // A store shared by the watchers of several namespaces: only this namespace's objects can have vanished.
    const namespace = this.#opts.namespace;
    const known = namespace
      ? this.store.byIndex(byNamespace, namespace).map((o) => [objectKey(o), o] as [string, T])
      : this.store.entries();
    const diff = diffRelist(known, items);
    for (const object of diff.deleted) {
      this.store.remove(objectKey(object));
      this.#emit({ type: 'DELETED', object });
    }
    for (const object of diff.added) {
      this.store.settleOwnWrite(objectKey(object));
      if (this.store.upsert(object) === 'added') this.#emit({ type: 'ADDED', object });
    }
    for (const { old, object } of diff.modified) {
      this.store.settleOwnWrite(objectKey(object));
      if (this.store.upsert(object) === 'updated') this.#emit({ type: 'MODIFIED', object, old });
    }
    // Listed objects equal to the cache: own writes among them were never announced.
    for (const object of items) this.#settleOwnWrite(object);
    this.#resourceVersion = resourceVersion;
    this.#backoff.reset();
    if (!this.#synced) {
      this.#synced = true;
      this.#log.info({ objects: this.store.size, resourceVersion }, 'cache synced');
      for (const wake of [...this.#syncWaiters]) wake();
    }
  }

  async #watch(stop: AbortSignal): Promise<void> {
    const abort = new AbortController();
    const onStop = () => abort.abort();
    stop.addEventListener('abort', onStop, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(new StallError()), this.#stallTimeoutMs);
      timer.unref();
    };
    try {
      arm();
      const events = await this.#opts.http.watch<T>(this.resource, {
        namespace: this.#opts.namespace,
        labelSelector: this.#opts.labelSelector,
        fieldSelector: this.#opts.fieldSelector,
        resourceVersion: this.#resourceVersion,
        timeoutSeconds: this.#timeoutSeconds,
        signal: abort.signal,
        connectTimeoutMs: this.#stallTimeoutMs + 1000,
      });
      this.#stalled = false;
      for await (const event of events) {
        arm();
        this.#backoff.reset();
        this.#apply(event.type, event.object);
      }
    } catch (err) {
      if (abort.signal.reason instanceof StallError) {
        this.#stalled = true;
        throw abort.signal.reason;
      }
      throw err;
    } finally {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
      abort.abort();
    }
  }

  #apply(type: string, raw: T): void {
    if (type === 'ERROR') {
      const status = raw as unknown as { code?: number; message?: string };
      if (status.code === 410) throw new GoneError(status.message);
      throw new ApiError(status.code ?? 500, 'WATCH', this.resource.plural, status);
    }
    const rv = raw.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      if (rv) this.#resourceVersion = rv;
      return;
    }
    const object = withTypeMeta(raw, this.resource);
    if (type === 'DELETED') {
      const old = this.store.remove(objectKey(object));
      if (old) this.#emit({ type: 'DELETED', object });
    } else {
      const old = this.store.get(objectKey(object));
      const result = this.store.upsert(object);
      if (result === 'added' || result === 'updated') this.store.settleOwnWrite(objectKey(object));
      if (result === 'added') this.#emit({ type: 'ADDED', object: this.store.get(objectKey(object))! });
      else if (result === 'updated')
        this.#emit({ type: 'MODIFIED', object: this.store.get(objectKey(object))!, old });
      else if (result === 'unchanged') this.#settleOwnWrite(object);
    }
    if (rv) this.#resourceVersion = rv;
  }

  /**
   * `delivered` is at the cached version: if that version is our own write, announce it now. Read-your-writes put
   * it in the cache without an event, and handlers (other controllers) learn of objects only through events.
   */
  #settleOwnWrite(delivered: T): void {
    const key = objectKey(delivered);
    const cached = this.store.get(key);
    if (!cached || cached.metadata.resourceVersion !== delivered.metadata.resourceVersion) return;
    const own = this.store.settleOwnWrite(key);
    if (!own) return;
    if (own.old) this.#emit({ type: 'MODIFIED', object: cached, old: own.old });
    else this.#emit({ type: 'ADDED', object: cached });
  }

  /** Requests other than the watch get the same silence bound, so a paused apiserver cannot hang a relist. */
  async #withStallBound<R>(stop: AbortSignal, fn: (signal: AbortSignal) => Promise<R>): Promise<R> {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(this.#stallTimeoutMs)]);
    return fn(signal);
  }

  #emit(change: Change<T>): void {
    for (const handler of this.#handlers) {
      try {
        handler(change);
      } catch (err) {
        this.#log.error({ err: describeError(err) }, 'change handler threw');
      }
    }
  }
}

/**
 * Items of a LIST carry no apiVersion/kind; handlers that map owners need them. The copy is `{ ...obj, apiVersion,
 * kind }` built with every field inside the object (compact.ts): added after a spread, the two would sit in a
 * backing store of their own, 24 bytes more for each object the cache then holds.
 */
function withTypeMeta<T extends KubeObject>(obj: T, rt: ResourceType): T {
  if (obj.kind && obj.apiVersion) return obj;
  const apiVersion = rt.group ? `${rt.group}/${rt.version}` : rt.version;
  // Not both absent (an empty string): the spread's order and values, without the compact layout.
  if (Object.hasOwn(obj, 'apiVersion') || Object.hasOwn(obj, 'kind'))
    return { ...obj, apiVersion, kind: rt.kind };
  const fields: [string, unknown][] = Object.entries(obj);
  fields.push(['apiVersion', apiVersion], ['kind', rt.kind]);
  return objectOf(fields) as T;
}
