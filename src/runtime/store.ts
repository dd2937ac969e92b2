import { keepApplyEntries } from './apply-skip.ts';
import {
  compareResourceVersions,
  type KubeObject,
  keyOf,
  type ObjectMeta,
  type ObjectRef,
  objectKey,
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
 * The reflector's cache: objects by `namespace/name`, with indexes. Every write is ordered by resourceVersion so
 * our own writes (fed in through `applyOwnWrite`) are visible at once and never overwritten by an older watch event.
 */
export class Store<T extends KubeObject> {
  readonly #objects = new Map<string, T>();
  readonly #indexers: Record<string, IndexFn<T>>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
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
    this.#indexers = {
      [byNamespace]: (o) => (o.metadata.namespace ? [o.metadata.namespace] : []),
      [byOwnerUid]: (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid),
      ...opts.indexers,
    };
    for (const name of Object.keys(this.#indexers)) this.#indexes.set(name, new Map());
    this.#dropManagedFields = opts.dropManagedFields ?? true;
    this.#transform = opts.transform;
  }

  get size(): number {
    return this.#objects.size;
  }

  get(ref: ObjectRef | string): T | undefined {
    return this.#objects.get(typeof ref === 'string' ? ref : keyOf(ref));
  }

  list(): T[] {
    return [...this.#objects.values()];
  }

  keys(): string[] {
    return [...this.#objects.keys()];
  }

  entries(): IterableIterator<[string, T]> {
    return this.#objects.entries();
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.#indexes.get(indexName);
    if (!index) throw new Error(`no index named ${indexName}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.#objects.get(key);
      if (obj) out.push(obj);
    }
    return out;
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
    const cached = this.#objects.get(key);
    if (cached) {
      const order = compareResourceVersions(obj.metadata.resourceVersion, cached.metadata.resourceVersion);
      if (order !== undefined && order < 0) return 'stale';
      if (order === 0) return 'unchanged';
      this.#unindex(key, cached);
    }
    this.#objects.set(key, obj);
    this.#index(key, obj);
    return cached ? 'updated' : 'added';
  }

  /** Read-your-writes: cache the object a write returned, only if it is newer than what is cached. */
  applyOwnWrite(written: T): boolean {
    const key = objectKey(written);
    const before = this.#objects.get(key);
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
    const cached = this.#objects.get(key);
    if (!cached) return undefined;
    this.#objects.delete(key);
    this.#unindex(key, cached);
    return cached;
  }

  clear(): void {
    this.#objects.clear();
    this.#tombstones.clear();
    this.#ownWritesUnseen.clear();
    for (const index of this.#indexes.values()) index.clear();
  }

  #trim(obj: T): T {
    let out = obj;
    const trimManagedFields = this.#dropManagedFields && out.metadata.managedFields;
    if (trimManagedFields || out.metadata.annotations?.[lastApplied] !== undefined) {
      const { managedFields, annotations, ...metadata } = out.metadata;
      const kept = managedFields && this.#dropManagedFields ? keepApplyEntries(managedFields) : managedFields;
      if (kept && kept.length > 0) (metadata as ObjectMeta).managedFields = kept;
      // kubectl's client-side apply keeps a copy of the whole object there; nothing of ours reads it.
      const { [lastApplied]: _copy, ...rest } = annotations ?? {};
      if (Object.keys(rest).length > 0) (metadata as ObjectMeta).annotations = rest;
      out = { ...out, metadata };
    }
    return this.#transform ? this.#transform(out) : out;
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        if (keys) keys.add(key);
        else index.set(value, new Set([key]));
      }
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}
