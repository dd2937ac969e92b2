/**
 * Descriptor of an API resource plus the object-key helpers the cache and queue share. `T` is the type of the
 * resource's objects (a `V1Job`, a custom resource's interface): the client's reads and writes through a typed
 * descriptor are typed by it, so no call site casts.
 */
export interface ResourceType<T extends Writable = Writable> {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Never set: it only carries `T`. */
  readonly objectType?: T;
}

/**
 * What the client needs of an object it writes: any typed Kubernetes object (the `V1*` types of
 * @kubernetes/client-node included, whose metadata is optional), routed by its name and namespace.
 */
export interface Writable {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

/** An object as the apiserver returns it and the cache holds it: `T` with its metadata. */
export type Stored<T extends Writable = Writable> = T & KubeObject;

// The one Kubernetes object type (src/api/kube-object.ts imports nothing and knows nothing of SampleDB).
import type { KubeObject } from '../api/kube-object.ts';

export type { KubeObject, ObjectMeta, OwnerReference } from '../api/kube-object.ts';

export interface ObjectRef {
  namespace: string;
  name: string;
}

export function apiVersionOf(rt: ResourceType): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}

export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function collectionPath(rt: ResourceType, namespace?: string): string {
  const base = rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  if (rt.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${rt.plural}`;
  return `${base}/${rt.plural}`;
}

export function objectPath(rt: ResourceType, ref: ObjectRef, subresource?: string): string {
  const path = `${collectionPath(rt, rt.namespaced ? ref.namespace : undefined)}/${encodeURIComponent(ref.name)}`;
  return subresource ? `${path}/${subresource}` : path;
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function keyOf(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

export function objectKey(obj: KubeObject): string {
  return keyOf(refOf(obj));
}

export function refOf(obj: KubeObject): ObjectRef {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}

export function parseKey(key: string): ObjectRef {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * Orders two resourceVersions. They are opaque by contract, but every apiserver backed by etcd serves decimal
 * revisions, and the API conventions allow comparing them; anything non-numeric compares as unknown (undefined).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x === y ? 0 : x < y ? -1 : 1;
}
