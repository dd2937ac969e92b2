import type { BackoffOptions } from './backoff.ts';
import type { KubeHttp } from './http.ts';
import type { Logger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import { type KubeObject, keyOf, type ObjectRef, type ResourceType } from './resource.ts';
import { Store, type StoreOptions } from './store.ts';
import { type ChangeHandler, Watcher } from './watcher.ts';

export interface InformerCacheOptions {
  http: KubeHttp;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /** Restrict every watch to one namespace (namespaced resources only). */
  namespace?: string;
  /**
   * Restrict watches of namespaced resources to these namespaces: one watch per namespace, one shared store. For
   * an operator whose RBAC is a Role per namespace, which forbids cluster-wide LIST/WATCH. Empty: all namespaces.
   */
  namespaces?: readonly string[];
  timeoutSeconds?: number;
  stallTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  pageSize?: number;
}

/** How an informer selects what it caches; the first informerFor() call of a resource decides. */
export interface InformerOptions {
  /**
   * Cache only objects with these labels (e.g. the ones the operator manages). Objects it must read although they
   * are not its own are then watched one by one, by name: {@link InformerCache.watchNamed}.
   */
  labelSelector?: string;
}

/** One resource's cache and change stream, fed by one watch, or one watch per namespace. */
export interface Informer<T extends KubeObject> {
  readonly resource: ResourceType;
  readonly store: Store<T>;
  onChange(handler: ChangeHandler<T>): () => void;
}

interface Entry {
  informer: Informer<KubeObject>;
  watchers: Watcher<KubeObject>[];
  /** `namespace/name` → a watch of that one object (fieldSelector metadata.name), with a store of its own. */
  named: Map<string, Watcher<KubeObject>>;
  handlers: Set<ChangeHandler<KubeObject>>;
  labelSelector: string | undefined;
}

/** One shared informer per resource type, so several controllers reading the same kind cost one watch and one cache. */
export class InformerCache {
  readonly #opts: InformerCacheOptions;
  readonly #namespaces: readonly (string | undefined)[];
  readonly #entries = new Map<string, Entry>();
  #started = false;

  constructor(opts: InformerCacheOptions) {
    this.#opts = opts;
    const namespaces = opts.namespaces?.length ? opts.namespaces : opts.namespace ? [opts.namespace] : [];
    this.#namespaces = [...new Set(namespaces)];
  }

  informerFor<T extends KubeObject>(
    rt: ResourceType,
    storeOptions?: StoreOptions<T>,
    informerOptions: InformerOptions = {},
  ): Informer<T> {
    return this.#entry(rt, storeOptions, informerOptions).informer as unknown as Informer<T>;
  }

  #entry<T extends KubeObject>(
    rt: ResourceType,
    storeOptions?: StoreOptions<T>,
    informerOptions: InformerOptions = {},
  ): Entry {
    const id = resourceId(rt);
    let entry = this.#entries.get(id);
    if (!entry) {
      const store = new Store<KubeObject>(storeOptions as StoreOptions<KubeObject> | undefined);
      const namespaces = rt.namespaced && this.#namespaces.length > 0 ? this.#namespaces : [undefined];
      const handlers = new Set<ChangeHandler<KubeObject>>();
      const watchers = namespaces.map((namespace) =>
        this.#watcher(rt, handlers, { namespace, store, labelSelector: informerOptions.labelSelector }),
      );
      const informer: Informer<KubeObject> = {
        resource: rt,
        store,
        onChange(handler) {
          handlers.add(handler);
          return () => handlers.delete(handler);
        },
      };
      entry = {
        informer,
        watchers,
        named: new Map(),
        handlers,
        labelSelector: informerOptions.labelSelector,
      };
      this.#entries.set(id, entry);
      if (this.#started) for (const w of watchers) w.start();
    }
    return entry;
  }

  #watcher(
    rt: ResourceType,
    handlers: Set<ChangeHandler<KubeObject>>,
    opts: { namespace?: string; store?: Store<KubeObject>; labelSelector?: string; fieldSelector?: string },
  ): Watcher<KubeObject> {
    const watcher = new Watcher<KubeObject>({
      http: this.#opts.http,
      resource: rt,
      ...opts,
      logger: this.#opts.logger,
      metrics: this.#opts.metrics,
      timeoutSeconds: this.#opts.timeoutSeconds,
      stallTimeoutMs: this.#opts.stallTimeoutMs,
      backoff: this.#opts.backoff,
      pageSize: this.#opts.pageSize,
    });
    watcher.onChange((change) => {
      for (const handler of handlers) handler(change);
    });
    return watcher;
  }

  /**
   * Watches exactly these objects of `rt` by name (one watch each, its own store), besides what the informer's
   * selector caches: for objects a spec references that are not the operator's own (a user's Secret). Their changes
   * reach the informer's handlers; read them with {@link get}. Refs no longer listed stop being watched.
   */
  watchNamed(rt: ResourceType, refs: readonly ObjectRef[]): void {
    const entry = this.#entry(rt);
    const wanted = new Map(refs.map((ref) => [keyOf(ref), ref] as const));
    for (const [key, watcher] of entry.named) {
      if (wanted.has(key)) continue;
      entry.named.delete(key);
      void watcher.stop();
    }
    for (const [key, ref] of wanted) {
      if (entry.named.has(key)) continue;
      const watcher = this.#watcher(rt, entry.handlers, {
        namespace: ref.namespace,
        fieldSelector: `metadata.name=${ref.name}`,
      });
      entry.named.set(key, watcher);
      if (this.#started) watcher.start();
    }
  }

  /**
   * Whether the cache can tell that `ref` is absent: an informer without a selector holds every object; with one,
   * the by-name watch of `ref` must have listed once.
   */
  knows(rt: ResourceType, ref: ObjectRef): boolean {
    const entry = this.#entries.get(resourceId(rt));
    if (!entry?.labelSelector) return true;
    return entry.informer.store.get(ref) !== undefined || (entry.named.get(keyOf(ref))?.synced ?? false);
  }

  /**
   * Where the cache keeps `obj` (read-your-writes): the informer's store if it selects the object, else the store of
   * the object's by-name watch, else nowhere (a watch that would never announce it must not be handed a copy to
   * keep forever). A deleted ref (no labels known) goes where it is cached now.
   */
  storeForWrite<T extends KubeObject>(rt: ResourceType, obj: KubeObject): Store<T> | undefined {
    const entry = this.#entries.get(resourceId(rt));
    if (!entry) return undefined;
    const key = keyOf({ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    const named = entry.named.get(key)?.store;
    const selected =
      !entry.labelSelector ||
      (obj.metadata.labels
        ? selects(entry.labelSelector, obj.metadata.labels)
        : entry.informer.store.get({
            namespace: obj.metadata.namespace ?? '',
            name: obj.metadata.name ?? '',
          }) !== undefined);
    return (selected ? entry.informer.store : named) as Store<T> | undefined;
  }

  /** A cached object: from the informer's store, else from its by-name watch. */
  get<T extends KubeObject>(rt: ResourceType, ref: ObjectRef): T | undefined {
    const entry = this.#entries.get(resourceId(rt));
    if (!entry) return undefined;
    return (entry.informer.store.get(ref) ?? entry.named.get(keyOf(ref))?.store.get(ref)) as T | undefined;
  }

  storeFor<T extends KubeObject>(rt: ResourceType): Store<T> | undefined {
    return this.#entries.get(resourceId(rt))?.informer.store as unknown as Store<T> | undefined;
  }

  /** The informers' watches: what sync and readiness are about (a by-name watch comes and goes with a spec). */
  get #watchers(): Watcher<KubeObject>[] {
    return [...this.#entries.values()].flatMap((e) => e.watchers);
  }

  get #allWatchers(): Watcher<KubeObject>[] {
    return [...this.#entries.values()].flatMap((e) => [...e.watchers, ...e.named.values()]);
  }

  start(): void {
    this.#started = true;
    for (const w of this.#allWatchers) w.start();
  }

  async stop(): Promise<void> {
    this.#started = false;
    await Promise.all(this.#allWatchers.map((w) => w.stop()));
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all(this.#watchers.map((w) => w.waitForSync(signal)));
    return results.every(Boolean);
  }

  get synced(): boolean {
    return this.#watchers.every((w) => w.synced);
  }

  /** Resource names whose watch is currently stalled. */
  stalled(): string[] {
    return this.#watchers.filter((w) => w.stalled).map((w) => resourceId(w.resource));
  }

  unsynced(): string[] {
    return this.#watchers.filter((w) => !w.synced).map((w) => resourceId(w.resource));
  }
}

/** Whether `labels` satisfy an equality selector (`k=v,k2=v2`, the only form the informers here use). */
function selects(selector: string, labels: Readonly<Record<string, string>>): boolean {
  return selector
    .split(',')
    .map((term) => term.split('='))
    .every(([key, value]) => key !== undefined && labels[key.trim()] === value?.trim());
}

function resourceId(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}
