import type { BackoffOptions } from './backoff.ts';
import type { KubeHttp } from './http.ts';
import type { Logger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { KubeObject, ResourceType } from './resource.ts';
import type { Store, StoreOptions } from './store.ts';
import { Watcher } from './watcher.ts';

export interface InformerCacheOptions {
  http: KubeHttp;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /** Restrict every watch to one namespace (namespaced resources only). */
  namespace?: string;
  timeoutSeconds?: number;
  stallTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  pageSize?: number;
}

/** One shared watcher per resource type, so several controllers reading the same kind cost one watch and one cache. */
export class InformerCache {
  readonly #opts: InformerCacheOptions;
  readonly #watchers = new Map<string, Watcher<KubeObject>>();
  #started = false;

  constructor(opts: InformerCacheOptions) {
    this.#opts = opts;
  }

  informerFor<T extends KubeObject>(rt: ResourceType, storeOptions?: StoreOptions<T>): Watcher<T> {
    const id = resourceId(rt);
    let watcher = this.#watchers.get(id);
    if (!watcher) {
      watcher = new Watcher<KubeObject>({
        http: this.#opts.http,
        resource: rt,
        namespace: rt.namespaced ? this.#opts.namespace : undefined,
        storeOptions: storeOptions as StoreOptions<KubeObject> | undefined,
        logger: this.#opts.logger,
        metrics: this.#opts.metrics,
        timeoutSeconds: this.#opts.timeoutSeconds,
        stallTimeoutMs: this.#opts.stallTimeoutMs,
        backoff: this.#opts.backoff,
        pageSize: this.#opts.pageSize,
      });
      this.#watchers.set(id, watcher);
      if (this.#started) watcher.start();
    }
    return watcher as unknown as Watcher<T>;
  }

  storeFor<T extends KubeObject>(rt: ResourceType): Store<T> | undefined {
    return this.#watchers.get(resourceId(rt))?.store as unknown as Store<T> | undefined;
  }

  start(): void {
    this.#started = true;
    for (const w of this.#watchers.values()) w.start();
  }

  async stop(): Promise<void> {
    this.#started = false;
    await Promise.all([...this.#watchers.values()].map((w) => w.stop()));
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#watchers.values()].map((w) => w.waitForSync(signal)));
    return results.every(Boolean);
  }

  get synced(): boolean {
    return [...this.#watchers.values()].every((w) => w.synced);
  }

  /** Resource names whose watch is currently stalled. */
  stalled(): string[] {
    return [...this.#watchers.values()].filter((w) => w.stalled).map((w) => resourceId(w.resource));
  }

  unsynced(): string[] {
    return [...this.#watchers.values()].filter((w) => !w.synced).map((w) => resourceId(w.resource));
  }
}

function resourceId(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}
