import { keepApplyEntries } from './apply-skip.ts';
import { objectOf, sharedTimestamp } from './compact.ts';
import {
  compareResourceVersions,
  type KubeObject,
  keyOf,
  type ObjectMeta,
  type ObjectRef,
  objectKey,
  parseKey,
} from './resource.ts';

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

/** Maps an object to the index values it is filed under. */
export type IndexFn<T> = (obj: T) => readonly string[];

export interface StoreOptions<T extends KubeObject> {
  indexers?: Record<string, IndexFn<T>>;
  /**
   * Trim metadata.managedFields (often the largest part of an object) before caching: only server-side apply
   * entries are kept, without their timestamps, because the client's write-skipping reads its own (apply-skip.ts,
   * ADR 0007); the Update entries other controllers leave are dropped. Default true; false keeps them all.
   * Whatever this says, kubectl's `last-applied-configuration` annotation (a copy of the whole object that
   * client-side apply leaves) is dropped: nothing in the runtime or its reconcilers reads it.
   */
  dropManagedFields?: boolean;
  /** Further trimming of cached objects, e.g. dropping fields the controller never reads. */
  transform?: (obj: T) => T;
}

export const byNamespace = 'namespace';
export const byOwnerUid = 'owner-uid';

export type UpsertResult = 'added' | 'updated' | 'unchanged' | 'stale';

/**
 * The reflector's cache: objects by namespace and name, with indexes. Every write is ordered by resourceVersion so
 * our own writes (fed in through `applyOwnWrite`) are visible at once and never overwritten by an older watch event.
 *
 * What it holds per object is kept small, as a cache holds thousands (docs/performance.md, "What the cache keeps"):
 * objects are filed by namespace, then by name, so no `namespace/name` key string is kept per object (the name map's
 * key is the object's own name string), and that per-namespace map is the namespace index. The other indexes hold
 * the objects themselves, not keys. `namespace/name` keys are built only when asked for (keys(), entries()).
 */
export class Store<T extends KubeObject> {
  /** namespace ('' for cluster-scoped objects) → name → object. */
  readonly #objects = new Map<string, Map<string, T>>();
  #size = 0;
  /** The indexes other than by namespace (which #objects is), unless the caller supplied its own byNamespace. */
  readonly #indexers: [string, IndexFn<T>][];
  readonly #indexes = new Map<string, Map<string, Set<T>>>();
  readonly #namespaceIndex: boolean;
  readonly #dropManagedFields: boolean;
  readonly #transform: ((obj: T) => T) | undefined;
  /** resourceVersion at which we deleted a key ourselves; older watch events for it are not resurrected. */
  readonly #tombstones = new Map<string, string | undefined>();
  /**
   * Our own writes the watch has not delivered yet, with the version the watch delivered before them (undefined:
   * none). The watch event of such a write finds it cached already, yet handlers must still hear of it: the write
   * may be another controller's only news of the object (one controller creates it for another to reconcile).
   */
  readonly #ownWritesUnseen = new Map<string, T | undefined>();

  constructor(opts: StoreOptions<T> = {}) {
    this.#namespaceIndex = !(opts.indexers && Object.hasOwn(opts.indexers, byNamespace));
    const indexers: Record<string, IndexFn<T>> = {
      [byOwnerUid]: (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid),
      ...opts.indexers,
    };
    this.#indexers = Object.entries(indexers);
    for (const [name] of this.#indexers) this.#indexes.set(name, new Map());
    this.#dropManagedFields = opts.dropManagedFields ?? true;
    this.#transform = opts.transform;
  }

  get size(): number {
    return this.#size;
  }

  get(ref: ObjectRef | string): T | undefined {
    if (typeof ref !== 'string') return this.#objects.get(ref.namespace || '')?.get(ref.name);
    const slash = ref.indexOf('/');
    return slash < 0
      ? this.#objects.get('')?.get(ref)
      : this.#objects.get(ref.slice(0, slash))?.get(ref.slice(slash + 1));
  }

  list(): T[] {
    const out: T[] = [];
    for (const names of this.#objects.values()) for (const obj of names.values()) out.push(obj);
    return out;
  }

  keys(): string[] {
    const out: string[] = [];
    for (const [namespace, names] of this.#objects)
      for (const name of names.keys()) out.push(keyOf({ namespace, name }));
    return out;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const [namespace, names] of this.#objects)
      for (const [name, obj] of names) yield [keyOf({ namespace, name }), obj];
  }

  byIndex(indexName: string, value: string): T[] {
    if (indexName === byNamespace && this.#namespaceIndex) {
      // Cluster-scoped objects (namespace '') are in no namespace.
      const names = value ? this.#objects.get(value) : undefined;
      return names ? [...names.values()] : [];
    }
    const index = this.#indexes.get(indexName);
    if (!index) throw new Error(`no index named ${indexName}`);
    const objects = index.get(value);
    return objects ? [...objects] : [];
  }

  /**
   * Inserts or replaces unless the cached copy is newer. Watch events arrive in order, so 'stale' happens only
   * when one of our own writes already put a newer version in the cache.
   */
  upsert(incoming: T): UpsertResult {
    const obj = this.#trim(incoming);
    const key = objectKey(obj);
    if (this.#tombstones.has(key)) {
      const order = compareResourceVersions(obj.metadata.resourceVersion, this.#tombstones.get(key));
      if (order === undefined || order <= 0) return 'stale';
      this.#tombstones.delete(key);
    }
    const namespace = obj.metadata.namespace || '';
    let names = this.#objects.get(namespace);
    const cached = names?.get(obj.metadata.name ?? '');
    if (cached) {
      const order = compareResourceVersions(obj.metadata.resourceVersion, cached.metadata.resourceVersion);
      if (order !== undefined && order < 0) return 'stale';
      if (order === 0) return 'unchanged';
      this.#unindex(cached);
    }
    if (!names) {
      names = new Map();
      this.#objects.set(namespace, names);
    }
    // The object's own name string is the key: nothing per object is allocated for filing it.
    names.set(obj.metadata.name ?? '', obj);
    if (!cached) this.#size++;
    this.#index(obj);
    return cached ? 'updated' : 'added';
  }

  /** Read-your-writes: cache the object a write returned, only if it is newer than what is cached. */
  applyOwnWrite(written: T): boolean {
    const key = objectKey(written);
    const before = this.get(key);
    const result = this.upsert(written);
    const applied = result === 'added' || result === 'updated';
    if (applied && !this.#ownWritesUnseen.has(key)) this.#ownWritesUnseen.set(key, before);
    return applied;
  }

  /**
   * For the reflector, once the watch (or a relist) delivered `key` at the cached version or later: if that version
   * came from our own write, returns what the watch delivered before it, so the caller can emit the change the
   * cache took in silently. Undefined when no own write was pending.
   */
  settleOwnWrite(key: string): { old: T | undefined } | undefined {
    if (!this.#ownWritesUnseen.has(key)) return undefined;
    const old = this.#ownWritesUnseen.get(key);
    this.#ownWritesUnseen.delete(key);
    return { old };
  }

  /** Read-your-writes for deletes: drop the object now and ignore older watch events for it. */
  applyOwnDelete(key: string, resourceVersion: string | undefined): void {
    this.remove(key);
    this.#tombstones.set(key, resourceVersion);
  }

  remove(key: string): T | undefined {
    this.#tombstones.delete(key);
    this.#ownWritesUnseen.delete(key);
    const { namespace, name } = parseKey(key);
    const names = this.#objects.get(namespace);
    const cached = names?.get(name);
    if (!names || !cached) return undefined;
    names.delete(name);
    if (names.size === 0) this.#objects.delete(namespace);
    this.#size--;
    this.#unindex(cached);
    return cached;
  }

  clear(): void {
    this.#objects.clear();
    this.#size = 0;
    this.#tombstones.clear();
    this.#ownWritesUnseen.clear();
    for (const index of this.#indexes.values()) index.clear();
  }

  #trim(obj: T): T {
    let out = obj;
    const trimManagedFields = this.#dropManagedFields && out.metadata.managedFields;
    if (trimManagedFields || out.metadata.annotations?.[lastApplied] !== undefined) {
      const { managedFields, annotations } = out.metadata;
      // The other fields in their order, then the kept managedFields and annotations.
      const fields: [string, unknown][] = [];
      for (const [name, value] of Object.entries(out.metadata)) {
        if (name === 'managedFields' || name === 'annotations') continue;
        fields.push([
          name,
          name === 'creationTimestamp' && typeof value === 'string' ? sharedTimestamp(value) : value,
        ]);
      }
      const kept = managedFields && this.#dropManagedFields ? keepApplyEntries(managedFields) : managedFields;
      if (kept && kept.length > 0) fields.push(['managedFields', kept]);
      // kubectl's client-side apply keeps a copy of the whole object there; nothing of ours reads it.
      const { [lastApplied]: _copy, ...rest } = annotations ?? {};
      if (Object.keys(rest).length > 0) fields.push(['annotations', rest]);
      // Built with every field inside the object (compact.ts): rest destructuring would leave 3+ of them outside.
      out = { ...out, metadata: objectOf(fields) as ObjectMeta };
    }
    return this.#transform ? this.#transform(out) : out;
  }

  #index(obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const objects = index.get(value);
        if (objects) objects.add(obj);
        else index.set(value, new Set([obj]));
      }
    }
  }

  #unindex(obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const objects = index.get(value);
        objects?.delete(obj);
        if (objects?.size === 0) index.delete(value);
      }
    }
  }
}
