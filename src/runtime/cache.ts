import type { BackoffOptions } from './backoff.ts';
import type { KubeHttp } from './http.ts';
import type { Logger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { KubeObject, ResourceType } from './resource.ts';
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

/** One resource's cache and change stream, fed by one watch, or one watch per namespace. */
export interface Informer<T extends KubeObject> {
  readonly resource: ResourceType;
  readonly store: Store<T>;
  onChange(handler: ChangeHandler<T>): () => void;
}

interface Entry {
  informer: Informer<KubeObject>;
  watchers: Watcher<KubeObject>[];
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

  informerFor<T extends KubeObject>(rt: ResourceType, storeOptions?: StoreOptions<T>): Informer<T> {
    const id = resourceId(rt);
    let entry = this.#entries.get(id);
    if (!entry) {
      const store = new Store<KubeObject>(storeOptions as StoreOptions<KubeObject> | undefined);
      const namespaces = rt.namespaced && this.#namespaces.length > 0 ? this.#namespaces : [undefined];
      const watchers = namespaces.map(
        (namespace) =>
          new Watcher<KubeObject>({
            http: this.#opts.http,
            resource: rt,
            namespace,
            store,
            logger: this.#opts.logger,
            metrics: this.#opts.metrics,
            timeoutSeconds: this.#opts.timeoutSeconds,
            stallTimeoutMs: this.#opts.stallTimeoutMs,
            backoff: this.#opts.backoff,
            pageSize: this.#opts.pageSize,
          }),
      );
      const informer: Informer<KubeObject> = {
        resource: rt,
        store,
        onChange(handler) {
          const unsubscribe = watchers.map((w) => w.onChange(handler));
          return () => {
            for (const off of unsubscribe) off();
          };
        },
      };
      entry = { informer, watchers };
      this.#entries.set(id, entry);
      if (this.#started) for (const w of watchers) w.start();
    }
    return entry.informer as unknown as Informer<T>;
  }

  storeFor<T extends KubeObject>(rt: ResourceType): Store<T> | undefined {
    return this.#entries.get(resourceId(rt))?.informer.store as unknown as Store<T> | undefined;
  }

  get #watchers(): Watcher<KubeObject>[] {
    return [...this.#entries.values()].flatMap((e) => e.watchers);
  }

  start(): void {
    this.#started = true;
    for (const w of this.#watchers) w.start();
  }

  async stop(): Promise<void> {
    this.#started = false;
    await Promise.all(this.#watchers.map((w) => w.stop()));
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

function resourceId(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}
