// Reads from the informer cache only: a step never asks the apiserver what the watches already told us.
import {
  byNamespace,
  byOwnerUid,
  type InformerCache,
  type ResourceType,
  type Stored,
  type Writable,
} from '../runtime/index.ts';

export class ClusterView {
  readonly #cache: InformerCache;

  constructor(cache: InformerCache) {
    this.#cache = cache;
  }

  get<T extends Writable>(rt: ResourceType<T>, namespace: string, name: string): Stored<T> | undefined {
    // The informer's store, or the by-name watch of an object a spec references (controllers.ts).
    return this.#cache.get<Stored<T>>(rt, { namespace: rt.namespaced ? namespace : '', name });
  }

  /** Objects in `namespace` whose labels include every pair of `labels`. */
  list<T extends Writable>(
    rt: ResourceType<T>,
    namespace: string,
    labels: Record<string, string> = {},
  ): Stored<T>[] {
    const store = this.#cache.storeFor<Stored<T>>(rt);
    if (!store) return [];
    const all = rt.namespaced ? store.byIndex(byNamespace, namespace) : store.list();
    return all.filter((o) => Object.entries(labels).every(([k, v]) => o.metadata.labels?.[k] === v));
  }

  ownedBy<T extends Writable>(rt: ResourceType<T>, ownerUid: string | undefined): Stored<T>[] {
    if (!ownerUid) return [];
    return this.#cache.storeFor<Stored<T>>(rt)?.byIndex(byOwnerUid, ownerUid) ?? [];
  }

  /** Objects of `rt` a store index maps `key` to (see watches.ts for the SampleDB indexes). */
  byIndex<T extends Writable>(rt: ResourceType<T>, index: string, key: string): Stored<T>[] {
    return this.#cache.storeFor<Stored<T>>(rt)?.byIndex(index, key) ?? [];
  }

  /** Whether an absent `name` is known to be absent (its by-name watch has listed), see InformerCache.knows. */
  knows(rt: ResourceType, namespace: string, name: string): boolean {
    return this.#cache.knows(rt, { namespace, name });
  }

  /** Whether the resource is watched at all (e.g. the snapshot API only when the cluster serves it). */
  watches(rt: ResourceType): boolean {
    return this.#cache.storeFor(rt) !== undefined;
  }
}
