// The ways the SampleDB controllers write, each declared by name. A step says which it uses (`Step.writes`) and gets a
// Writer limited to those, so "create once, never overwrite" or "patch only under a resourceVersion guard" is a
// property of the step table, not a convention each step re-implements.
import { EVENT_REASONS } from '../api/index.ts';
import type { DeleteOptions } from '../runtime/http.ts';
import {
  type Client,
  type EventInput,
  isStatus,
  type KubeObject,
  type ObjectRef,
  type ResourceType,
  refOf,
  type Stored,
  type Writable,
} from '../runtime/index.ts';

export const WRITE_MODES = [
  /** Server-side apply of the whole desired object: the fields the operator owns converge. */
  'apply',
  /** Create if missing and never overwrite; AlreadyExists means an earlier run created it: the same outcome. */
  'create-once',
  /** A merge patch of named fields of an existing object (a size, a label, owner references). */
  'patch',
  /** A JSON patch guarded by the object's resourceVersion: the finalizer list, which others edit too. */
  'guarded-patch',
  'delete',
  /**
   * Server-side apply to the status subresource. `applyStatusOf` adds the read's resourceVersion as a precondition,
   * for status state machines (backups, restores, drills) whose phase must never go back.
   */
  'status',
  'event',
] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export interface WriterOptions {
  /**
   * Records a Normal `Created` Event on this object (the SampleDB) for each child an apply or a create-once brought
   * into existence, as client-go controllers do (`SuccessfulCreate`). Part of that write, not a declared `event`.
   */
  announceCreatedOn?: KubeObject;
}

export class Writer {
  readonly #client: Client;
  readonly #allowed: ReadonlySet<WriteMode>;
  readonly #opts: WriterOptions;

  constructor(client: Client, allowed: readonly WriteMode[] = WRITE_MODES, opts: WriterOptions = {}) {
    this.#client = client;
    this.#allowed = new Set(allowed);
    this.#opts = opts;
  }

  /** This writer limited to `modes`. */
  only(modes: readonly WriteMode[]): Writer {
    return new Writer(
      this.#client,
      modes.filter((m) => this.#allowed.has(m)),
      this.#opts,
    );
  }

  async apply<T extends Writable>(rt: ResourceType<T>, obj: T): Promise<Stored<T>> {
    this.#check('apply');
    const existed = this.#client.get(rt, refOf(obj as unknown as KubeObject)) !== undefined;
    const written = await this.#client.apply(rt, obj);
    if (!existed) await this.#announceCreated(rt, written);
    return written;
  }

  /** The created object, or undefined when it existed already (the cache shows it once its watch event arrives). */
  async createOnce<T extends Writable>(rt: ResourceType<T>, obj: T): Promise<Stored<T> | undefined> {
    this.#check('create-once');
    let created: Stored<T>;
    try {
      created = await this.#client.create(rt, obj);
    } catch (err) {
      if (isStatus(err, 409)) return undefined;
      throw err;
    }
    await this.#announceCreated(rt, created);
    return created;
  }

  /** Best effort: the child exists either way, and a lost Event must not fail (and so repeat) the step. */
  async #announceCreated(rt: ResourceType, child: KubeObject): Promise<void> {
    const regarding = this.#opts.announceCreatedOn;
    if (!regarding) return;
    const note = `Created ${child.kind ?? rt.kind} ${child.metadata.name}`;
    await this.#client
      .event({ regarding, type: 'Normal', reason: EVENT_REASONS.created, action: 'Create', note })
      .catch(() => undefined);
  }

  /** Merge-patches `ref`; undefined when `ifMissing: 'skip'` and it does not exist. */
  async patch<T extends Writable>(
    rt: ResourceType<T>,
    ref: ObjectRef,
    patch: unknown,
    opts: { ifMissing?: 'fail' | 'skip' } = {},
  ): Promise<Stored<T> | undefined> {
    this.#check('patch');
    try {
      return await this.#client.patch(rt, ref, patch, 'merge');
    } catch (err) {
      if (opts.ifMissing === 'skip' && isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  addFinalizer<T extends Writable>(
    rt: ResourceType<T>,
    obj: Stored<T>,
    finalizer: string,
  ): Promise<Stored<T>> {
    this.#check('guarded-patch');
    return this.#client.addFinalizer(rt, obj, finalizer);
  }

  removeFinalizer<T extends Writable>(
    rt: ResourceType<T>,
    obj: Stored<T>,
    finalizer: string,
  ): Promise<Stored<T>> {
    this.#check('guarded-patch');
    return this.#client.removeFinalizer(rt, obj, finalizer);
  }

  /** False when it was gone already. */
  delete(rt: ResourceType, ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    this.#check('delete');
    return this.#client.delete(rt, ref, opts);
  }

  /**
   * A JSON patch whose `ops` carry their own test: undefined when the test failed (the object moved on since it
   * was read; the next reconcile reads it again).
   */
  async guardedPatch<T extends Writable>(
    rt: ResourceType<T>,
    ref: ObjectRef,
    ops: unknown[],
  ): Promise<Stored<T> | undefined> {
    this.#check('guarded-patch');
    try {
      return await this.#client.patch(rt, ref, ops, 'json');
    } catch (err) {
      if (isStatus(err, 422) || isStatus(err, 409) || isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** A JSON patch of the status subresource; `ops` carry their own resourceVersion test (the election's guard). */
  guardedPatchStatus<T extends Writable>(
    rt: ResourceType<T>,
    ref: ObjectRef,
    ops: unknown[],
  ): Promise<Stored<T>> {
    this.#check('guarded-patch');
    return this.#client.patchStatus(rt, ref, ops, 'json');
  }

  applyStatus<T extends Writable>(rt: ResourceType<T>, obj: Partial<T> & Writable): Promise<Stored<T>> {
    this.#check('status');
    return this.#client.applyStatus(rt, obj);
  }

  /**
   * Server-side apply of a status computed from `read`, with read's resourceVersion as a precondition. When the object
   * changed after the cache held `read` (another writer, or a write of ours the cache has not seen), the apiserver
   * answers 409, nothing lands, and the client throws ConflictError: the controller reconciles again from the fresher
   * object. Without it a reconcile that started from a stale read could put a Completed backup back to Pending.
   */
  applyStatusOf<T extends Writable>(
    rt: ResourceType<T>,
    read: Stored<T>,
    obj: Partial<T> & Writable,
  ): Promise<Stored<T>> {
    this.#check('status');
    return this.#client.applyStatus(rt, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: read.metadata.resourceVersion },
    });
  }

  event(input: EventInput): Promise<void> {
    this.#check('event');
    return this.#client.event(input);
  }

  /**
   * For a write to a database rather than the apiserver (pg_promote): throws while this replica may no longer write
   * (its lease may have passed to another), as every API write would.
   */
  assertMayWrite(what: string): void {
    this.#client.assertMayWrite(what);
  }

  #check(mode: WriteMode): void {
    if (!this.#allowed.has(mode))
      throw new Error(
        `write mode "${mode}" is not declared (declared: ${[...this.#allowed].join(', ') || 'none'})`,
      );
  }
}
