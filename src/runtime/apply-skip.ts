// Write-skipping for server-side apply (ADR 0007): an apply whose result is already in the cache is not sent. Pure;
// the client asks it before every apply.
//
// An apply is a no-op exactly when (1) every field of the desired object already has that value, and (2) our field
// manager already owns exactly the desired set of fields: a field we applied before and no longer desire must be
// sent, so the apiserver removes it. (1) compares the desired object with the cached one; (2) compares the desired
// object's field paths with our managedFields entry (fieldsV1), which the cache keeps for this (store.ts). Anything
// this cannot prove (no entry, another apiVersion, null values, a shape it does not know) means "apply".

import { createHash } from 'node:crypto';
import type { KubeObject } from './resource.ts';

/** One metadata.managedFields entry, as the apiserver returns it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: FieldSet;
  time?: string;
}

/** fieldsV1: `f:<name>` fields, `k:<json>` list items by key, `v:<json>` set items, `i:<n>` by index, `.` self. */
export type FieldSet = { [key: string]: FieldSet };

/** Why an apply is needed, or undefined when the cached object already is the result (for logs and tests). */
export type ApplyNeed =
  | 'not-cached'
  | 'terminating'
  | 'not-owned'
  | 'value-differs'
  | 'ownership-differs'
  | 'undecidable';

/**
 * Fields server-side apply never records in fieldsV1: the object's identity and type, and the metadata the server
 * sets (uid and resourceVersion, when given, are preconditions: checked apart, see preconditionsHold).
 */
const identity = {
  top: new Set(['apiVersion', 'kind']),
  metadata: new Set([
    'name',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'managedFields',
    'selfLink',
  ]),
};

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Undefined when applying `desired` (as `manager`, to `subresource` or the main resource) would change nothing in
 * `cached`; otherwise the reason it must be sent.
 */
export function applyNeed(
  desired: KubeObject,
  cached: KubeObject | undefined,
  manager: string,
  subresource = '',
): ApplyNeed | undefined {
  if (!cached) return 'not-cached';
  if (cached.metadata.deletionTimestamp) return 'terminating';
  const entry = ownEntry(cached, manager, subresource);
  if (!entry?.fieldsV1) return 'not-owned';
  if (desired.apiVersion && entry.apiVersion && desired.apiVersion !== entry.apiVersion) return 'not-owned';
  if (!preconditionsHold(desired, cached)) return 'value-differs';
  try {
    const fields = withoutIdentity(desired);
    if (!covers(fields, withoutIdentity(cached))) return 'value-differs';
    if (!sameFieldSet(fields, entry.fieldsV1, cached as Json)) return 'ownership-differs';
    return undefined;
  } catch (error) {
    if (error instanceof Undecidable) return 'undecidable';
    throw error;
  }
}

class Undecidable extends Error {}

/** A uid or resourceVersion in an applied object is a precondition: the apply would fail unless it matches. */
function preconditionsHold(desired: KubeObject, cached: KubeObject): boolean {
  const { uid, resourceVersion } = desired.metadata;
  return (
    (!uid || uid === cached.metadata.uid) &&
    (!resourceVersion || resourceVersion === cached.metadata.resourceVersion)
  );
}

function ownEntry(obj: KubeObject, manager: string, subresource: string): ManagedFieldsEntry | undefined {
  const entries = (obj.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  return entries.find(
    (e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === subresource,
  );
}

/** The object without the fields apply treats as identity (never in fieldsV1). */
function withoutIdentity(obj: KubeObject): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (identity.top.has(key) || value === undefined) continue;
    if (key === 'metadata' && isObject(value)) {
      const metadata: Record<string, Json> = {};
      for (const [name, field] of Object.entries(value))
        if (!identity.metadata.has(name) && field !== undefined) metadata[name] = field;
      if (Object.keys(metadata).length > 0) out.metadata = metadata;
      continue;
    }
    out[key] = value;
  }
  return out;
}

/**
 * True when every value in `desired` is in `cached`. Maps may hold more keys in the cache (other managers' fields,
 * defaults); lists must match item by item, and scalars exactly. An empty list or map desired matches an absent one
 * (the apiserver omits empty optional fields).
 */
export function covers(desired: Json, cached: Json): boolean {
  if (desired === null) throw new Undecidable('null in an applied object removes a field');
  if (Array.isArray(desired)) {
    if (cached === undefined) return desired.length === 0;
    if (!Array.isArray(cached) || cached.length !== desired.length) return false;
    return desired.every((item, i) => covers(item, cached[i]));
  }
  if (isObject(desired)) {
    if (cached === undefined) return Object.keys(desired).length === 0;
    if (!isObject(cached)) return false;
    for (const [key, value] of Object.entries(desired)) {
      if (value === undefined) continue;
      if (!covers(value, cached[key])) return false;
    }
    return true;
  }
  return desired === cached;
}

/**
 * True when `fields` (our fieldsV1) records exactly the field paths of `desired`: each desired field is there, and
 * nothing else is. `cached` (which covers `desired`) supplies the values of defaulted list keys, e.g. a port's
 * protocol, that a keyed list item's `k:` name includes but the desired item may leave out.
 */
function sameFieldSet(
  desired: Json,
  fields: FieldSet,
  cached: Json,
  optional: ReadonlySet<string> = noNames,
): boolean {
  // A keyed item's key fields identify it: whether the item names a defaulted one (a port's protocol) or not, the
  // apply means the same.
  const children = Object.keys(fields).filter(
    (k) => k !== '.' && !(optional.has(k) && isObject(desired) && desired[k.slice(2)] === undefined),
  );
  if (Array.isArray(desired)) {
    // An atomic list is owned whole: `f:args: {}`.
    if (children.length === 0) return true;
    if (children.length !== desired.length) return false;
    const cachedItems = Array.isArray(cached) ? cached : [];
    const unmatched = new Set(children);
    for (const [i, item] of desired.entries()) {
      const key = itemKey(item, i, cachedItems[i], unmatched);
      if (!key) return false;
      unmatched.delete(key);
      if (key.startsWith('k:') || key.startsWith('i:')) {
        if (!sameFieldSet(item, fields[key]!, cachedItems[i], keyNames(key))) return false;
      }
    }
    return unmatched.size === 0;
  }
  if (isObject(desired)) {
    const keys = Object.keys(desired).filter((k) => desired[k] !== undefined);
    const cachedMap = isObject(cached) ? cached : {};
    // An atomic map (or a struct owned whole, e.g. a Service's selector) has no children recorded: the apply
    // replaces it whole, so a key the cache holds and the desired map does not (one we no longer want) would be
    // removed. `covers` lets maps hold extra keys; here they must not.
    if (children.length === 0) return Object.keys(cachedMap).every((key) => keys.includes(key));
    let recorded = 0;
    for (const key of keys) {
      const sub = fields[`f:${key}`];
      if (!sub) {
        // An empty map or list may be recorded or not, as the apiserver omits it: either way nothing to own.
        if (isEmpty(desired[key])) continue;
        return false;
      }
      recorded++;
      if (!sameFieldSet(desired[key], sub, cachedMap[key])) return false;
    }
    return recorded === children.length;
  }
  // A scalar is a leaf: `f:name: {}`.
  return children.length === 0;
}

/** Which fieldsV1 child records list item `item` at `index` (`cachedItem` is its cached counterpart). */
function itemKey(
  item: Json,
  index: number,
  cachedItem: Json,
  candidates: ReadonlySet<string>,
): string | undefined {
  if (!isObject(item)) {
    const key = `v:${JSON.stringify(item)}`;
    return candidates.has(key) ? key : undefined;
  }
  const source = isObject(cachedItem) ? cachedItem : item;
  for (const candidate of candidates) {
    if (candidate.startsWith('k:')) {
      const keyFields = JSON.parse(candidate.slice(2)) as Record<string, Json>;
      const matches = Object.entries(keyFields).every(([name, value]) =>
        isDeepEqualJson(item[name] ?? source[name], value),
      );
      if (matches) return candidate;
    } else if (!candidate.startsWith('i:') && !candidate.startsWith('v:')) {
      throw new Undecidable(`unexpected fieldsV1 list child ${candidate}`);
    }
  }
  return candidates.has(`i:${index}`) ? `i:${index}` : undefined;
}

const noNames: ReadonlySet<string> = new Set();

const isEmpty = (value: Json): boolean =>
  (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0);

/** The `f:` names of a `k:` child's key fields. */
function keyNames(key: string): ReadonlySet<string> {
  if (!key.startsWith('k:')) return noNames;
  return new Set(Object.keys(JSON.parse(key.slice(2)) as object).map((name) => `f:${name}`));
}

function isDeepEqualJson(a: Json, b: Json): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The managedFields a cache keeps: only Apply entries (what applyNeed reads), without their timestamps, and shared
 * between objects: a list equal to one already cached (objects one client applied alike, such as 5,000 ConfigMaps
 * of one builder) is that list; otherwise each entry's field sets are shared (see shareFields).
 */
export function keepApplyEntries(entries: readonly unknown[]): ManagedFieldsEntry[] {
  const applied: ManagedFieldsEntry[] = [];
  for (const entry of entries as ManagedFieldsEntry[]) {
    if (entry?.operation !== 'Apply') continue;
    const { time: _time, ...rest } = entry;
    applied.push(rest);
  }
  if (applied.length === 0) return applied;
  const key = hashOf(applied);
  const known = shared.get(key)?.deref() as ManagedFieldsEntry[] | undefined;
  if (known) return known;
  const kept = applied.map(({ fieldsV1, ...rest }) =>
    fieldsV1 ? { ...rest, fieldsV1: shareFields(fieldsV1) } : rest,
  );
  remember(key, kept);
  return kept;
}

/**
 * Field sets and Apply entry lists already cached, by a hash of their JSON; an entry goes when no cached object
 * uses it any more. What is shared must never be mutated.
 */
const shared = new Map<string, WeakRef<object>>();
const unused = new FinalizationRegistry<string>((key) => {
  if (!shared.get(key)?.deref()) shared.delete(key);
});

/**
 * The same field set (the children of one apply, e.g. `f:spec` of 500 StatefulSets built by one builder) is held
 * once: each top-level subtree, and each one under `f:metadata` (labels, annotations; owner references differ), is
 * replaced by an equal one already cached. Cached field sets are shared, so they must never be mutated.
 */
export function shareFields(fields: FieldSet): FieldSet {
  const out: FieldSet = {};
  for (const [key, sub] of Object.entries(fields)) {
    if (key !== 'f:metadata') {
      out[key] = sharedCopy(sub);
      continue;
    }
    const metadata: FieldSet = {};
    for (const [name, field] of Object.entries(sub)) metadata[name] = sharedCopy(field);
    out[key] = metadata;
  }
  return out;
}

function sharedCopy(fields: FieldSet): FieldSet {
  const key = hashOf(fields);
  const known = shared.get(key)?.deref() as FieldSet | undefined;
  if (known) return known;
  remember(key, fields);
  return fields;
}

const hashOf = (value: object): string => createHash('sha1').update(JSON.stringify(value)).digest('base64');

function remember(key: string, value: object): void {
  shared.set(key, new WeakRef(value));
  unused.register(value, key);
}
