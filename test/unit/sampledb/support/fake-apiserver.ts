// A fake apiserver for the controller's orchestration tests: objects in memory with resourceVersions, and the
// verbs the runtime Client uses (server-side apply, create with AlreadyExists, merge and guarded JSON patches,
// delete with finalizers, the status subresource). No controllers run in it: a test plays the StatefulSet controller
// or the backup Job by editing objects. Every write is logged, and `crashAt` makes the n-th write fail the way a
// killed operator would (the write does not happen), so a test can restart from a fresh cache and check the resume.
import { InformerCache } from '../../../../src/runtime/cache.ts';
import { Client } from '../../../../src/runtime/client.ts';
import { ApiError, type KubeHttp } from '../../../../src/runtime/http.ts';
import { EVENTS } from '../../../../src/runtime/kinds.ts';
import type {
  KubeObject,
  ObjectRef,
  ResourceType,
  Stored,
  Writable,
} from '../../../../src/runtime/resource.ts';
import {
  CONFIGMAPS,
  JOBS,
  NAMESPACES,
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  SAMPLEDB_DRILLS,
  SAMPLEDB_RESTORES,
  SAMPLEDBS,
  SECRETS,
  SERVICES,
  STATEFULSETS,
  STORAGE_CLASSES,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../../../../src/sampledb/resources.ts';
import { ClusterView } from '../../../../src/sampledb/view.ts';
import { SAMPLEDB_BACKUP_STORE, SAMPLEDB_STORE } from '../../../../src/sampledb/watches.ts';

export interface Write {
  /** `note`: something the test did (played a controller), for ordering assertions. */
  verb: 'apply' | 'create' | 'patch' | 'delete' | 'status' | 'note';
  plural: string;
  name: string;
}

/** Thrown by the fake for the write `crashAt` names: the operator "died" before the apiserver got it. */
export class Crash extends Error {}

const WATCHED: readonly ResourceType[] = [
  SAMPLEDBS,
  SAMPLEDB_BACKUPS,
  STATEFULSETS,
  JOBS,
  SERVICES,
  CONFIGMAPS,
  SECRETS,
  PODS,
  PVCS,
  STORAGE_CLASSES,
  SAMPLEDB_DRILLS,
  SAMPLEDB_RESTORES,
  NAMESPACES,
];

type Obj = KubeObject & Record<string, unknown>;

const idOf = (rt: ResourceType, ref: ObjectRef) => `${rt.plural}.${rt.group}:${ref.namespace}/${ref.name}`;
const clone = <T>(value: T): T => structuredClone(value);

export class FakeApiserver {
  readonly #objects = new Map<string, { rt: ResourceType; obj: Obj }>();
  #rv = 100;
  #uid = 0;
  #writes = 0;
  readonly log: Write[] = [];
  /** The Events created (not in `log`: they are not the reconcile's writes of objects). */
  readonly events: KubeObject[] = [];
  /** The 1-based index of the write that crashes (counted over the fake's whole life); undefined: none. */
  crashAt: number | undefined;
  /** Serve the snapshot API (VolumeSnapshots and their classes). */
  snapshots = false;

  note(what: string): void {
    this.log.push({ verb: 'note', plural: '', name: what });
  }

  /** Puts an object as if another client had written it. */
  put<T extends Writable>(rt: ResourceType<T>, obj: T): Stored<T> {
    const o = clone(obj) as unknown as Obj;
    const ref = { namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' };
    const existing = this.#objects.get(idOf(rt, ref))?.obj;
    o.metadata = {
      ...o.metadata,
      uid: existing?.metadata.uid ?? o.metadata.uid ?? `uid-${++this.#uid}`,
      resourceVersion: String(++this.#rv),
      creationTimestamp:
        existing?.metadata.creationTimestamp ?? o.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z',
    };
    this.#objects.set(idOf(rt, ref), { rt, obj: o });
    return clone(o) as unknown as Stored<T>;
  }

  /** Removes an object as if another client (a controller the test plays) had deleted it. */
  remove(rt: ResourceType, namespace: string, name: string): void {
    this.#objects.delete(idOf(rt, { namespace, name }));
  }

  get<T extends Writable>(rt: ResourceType<T>, namespace: string, name: string): Stored<T> | undefined {
    const found = this.#objects.get(idOf(rt, { namespace, name }))?.obj;
    return found ? (clone(found) as unknown as Stored<T>) : undefined;
  }

  list<T extends Writable>(rt: ResourceType<T>): Stored<T>[] {
    return [...this.#objects.values()]
      .filter((e) => e.rt.plural === rt.plural && e.rt.group === rt.group)
      .map((e) => clone(e.obj) as unknown as Stored<T>);
  }

  /** A cache as a (re)started operator builds it: every watched resource listed from the apiserver. */
  freshCache(): InformerCache {
    const cache = new InformerCache({ http: this.http() });
    cache.informerFor(SAMPLEDBS, SAMPLEDB_STORE);
    cache.informerFor(SAMPLEDB_BACKUPS, SAMPLEDB_BACKUP_STORE);
    const watched = this.snapshots ? [...WATCHED, VOLUME_SNAPSHOTS, VOLUME_SNAPSHOT_CLASSES] : WATCHED;
    for (const rt of watched) {
      const store = cache.informerFor(rt).store;
      for (const obj of this.list(rt)) store.upsert(obj);
    }
    return cache;
  }

  /** An operator's client and cache view on this apiserver. */
  operator(now: () => Date = () => new Date('2026-02-01T00:00:00Z')) {
    const cache = this.freshCache();
    const client = new Client({ http: this.http(), cache, fieldManager: 'sampledb-operator', now });
    return { cache, client, view: new ClusterView(cache), now };
  }

  #write(verb: Write['verb'], rt: ResourceType, name: string): void {
    this.#writes++;
    if (this.crashAt === this.#writes)
      throw new Crash(`crash at write ${this.#writes} (${verb} ${rt.plural}/${name})`);
    this.log.push({ verb, plural: rt.plural, name });
  }

  http(): KubeHttp {
    const self = this;
    const find = (rt: ResourceType, ref: ObjectRef) => self.#objects.get(idOf(rt, ref))?.obj;
    const store = (rt: ResourceType, obj: Obj) => {
      obj.metadata.resourceVersion = String(++self.#rv);
      self.#objects.set(idOf(rt, refOf(obj)), { rt, obj });
      return clone(obj);
    };
    const refOf = (obj: KubeObject) => ({
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name ?? '',
    });
    const notFound = (ref: ObjectRef) => new ApiError(404, 'GET', ref.name, { reason: 'NotFound' });
    const http = {
      async apply(rt: ResourceType, obj: KubeObject, opts: { subresource?: string }) {
        const ref = refOf(obj);
        const existing = find(rt, ref);
        if (opts.subresource === 'status') {
          self.#write('status', rt, ref.name);
          if (!existing) throw notFound(ref);
          // As kube-apiserver: a resourceVersion in an applied object is a precondition.
          const precondition = obj.metadata.resourceVersion;
          if (precondition && precondition !== existing.metadata.resourceVersion)
            throw new ApiError(409, 'PATCH', ref.name, { reason: 'Conflict', code: 409 });
          return store(rt, { ...clone(existing), status: clone((obj as Obj).status) });
        }
        if (rt === EVENTS) return clone(obj);
        self.#write('apply', rt, ref.name);
        const applied = clone(obj) as Obj;
        const metadata = {
          ...existing?.metadata,
          ...applied.metadata,
          uid: existing?.metadata.uid ?? `uid-${++self.#uid}`,
          creationTimestamp: existing?.metadata.creationTimestamp ?? '2026-02-01T00:00:00Z',
          ...(existing?.metadata.finalizers ? { finalizers: existing.metadata.finalizers } : {}),
        };
        return store(rt, {
          ...existing,
          ...applied,
          ...(existing?.status ? { status: existing.status } : {}),
          metadata,
        });
      },
      async create(rt: ResourceType, obj: KubeObject) {
        const ref = refOf(obj);
        if (rt === EVENTS) {
          self.events.push(clone(obj));
          return clone(obj);
        }
        self.#write('create', rt, ref.name);
        if (find(rt, ref)) throw new ApiError(409, 'POST', ref.name, { reason: 'AlreadyExists' });
        const created = clone(obj) as Obj;
        created.metadata = {
          ...created.metadata,
          uid: `uid-${++self.#uid}`,
          creationTimestamp: '2026-02-01T00:00:00Z',
        };
        return store(rt, created);
      },
      async patch(rt: ResourceType, ref: ObjectRef, patch: unknown, type: string) {
        if (rt === EVENTS) return {};
        self.#write('patch', rt, ref.name);
        const existing = find(rt, ref);
        if (!existing) throw notFound(ref);
        const next = clone(existing);
        if (type === 'json') {
          for (const op of patch as { op: string; path: string; value?: unknown }[]) {
            if (
              op.op === 'test' &&
              op.path === '/metadata/resourceVersion' &&
              op.value !== existing.metadata.resourceVersion
            )
              throw new ApiError(422, 'PATCH', ref.name, { reason: 'Invalid' });
            if (op.path.startsWith('/metadata/finalizers')) {
              const list = next.metadata.finalizers ?? [];
              if (op.op === 'add')
                next.metadata.finalizers = op.path.endsWith('/-')
                  ? [...list, op.value as string]
                  : (op.value as string[]);
              if (op.op === 'remove') list.splice(Number(op.path.split('/').at(-1)), 1);
            }
          }
          if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
            self.#objects.delete(idOf(rt, ref));
            return clone(next);
          }
          return store(rt, next);
        }
        return store(rt, mergePatch(next, patch) as Obj);
      },
      async delete(rt: ResourceType, ref: ObjectRef, opts: { preconditions?: { uid?: string } } = {}) {
        self.#write('delete', rt, ref.name);
        const existing = find(rt, ref);
        if (!existing) throw notFound(ref);
        if (opts.preconditions?.uid && opts.preconditions.uid !== existing.metadata.uid)
          throw new ApiError(409, 'DELETE', ref.name, { reason: 'Conflict' });
        if ((existing.metadata.finalizers ?? []).length > 0) {
          existing.metadata.deletionTimestamp ??= '2026-02-01T00:00:00Z';
          return store(rt, existing);
        }
        self.#objects.delete(idOf(rt, ref));
        return clone(existing);
      },
    };
    return http as unknown as KubeHttp;
  }
}

/** RFC 7386: null removes a key, objects merge, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
