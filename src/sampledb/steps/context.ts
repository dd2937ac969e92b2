// What every reconcile step gets: the SampleDB, cached reads, the client, and the shared record of what was observed
// (which the status step turns into status.conditions).
import type { OperatorDefaults, SampleDbObject } from '../../api/index.ts';
import {
  byNamespace,
  byOwnerUid,
  type Client,
  type ConditionInput,
  type InformerCache,
  type KubeObject,
  type Logger,
  type ResourceType,
} from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import type { ObservedChildren } from '../status.ts';

/** Reads from the informer cache only: a step never asks the apiserver what the watches already told us. */
export class ClusterView {
  readonly #cache: InformerCache;

  constructor(cache: InformerCache) {
    this.#cache = cache;
  }

  get<T extends KubeObject>(rt: ResourceType, namespace: string, name: string): T | undefined {
    return this.#cache.storeFor<T>(rt)?.get({ namespace: rt.namespaced ? namespace : '', name });
  }

  /** Objects in `namespace` whose labels include every pair of `labels`. */
  list<T extends KubeObject>(rt: ResourceType, namespace: string, labels: Record<string, string> = {}): T[] {
    const store = this.#cache.storeFor<T>(rt);
    if (!store) return [];
    const all = rt.namespaced ? store.byIndex(byNamespace, namespace) : store.list();
    return all.filter((o) => Object.entries(labels).every(([k, v]) => o.metadata.labels?.[k] === v));
  }

  ownedBy<T extends KubeObject>(rt: ResourceType, ownerUid: string | undefined): T[] {
    if (!ownerUid) return [];
    return this.#cache.storeFor<T>(rt)?.byIndex(byOwnerUid, ownerUid) ?? [];
  }

  /** Whether the resource is watched at all (e.g. the snapshot API only when the cluster serves it). */
  watches(rt: ResourceType): boolean {
    return this.#cache.storeFor(rt) !== undefined;
  }
}

export interface SampleDbDeps {
  client: Client;
  view: ClusterView;
  now?: () => Date;
  /** Operator-wide defaults of the desired objects (the PostgreSQL image repository). */
  defaults?: OperatorDefaults;
}

export interface StepContext {
  /** The SampleDB resolved once for this reconcile (spec with defaults, names, labels, endpoint). */
  instance: SampleDbInstance;
  /** The SampleDB as last written (the finalizer step replaces it). */
  db: SampleDbObject;
  client: Client;
  view: ClusterView;
  log: Logger;
  signal: AbortSignal;
  now: () => Date;
  /** Filled in by the steps, read by the status step. */
  observed: ObservedChildren;
  /** Conditions beyond the ones status.ts derives (StorageResized, DeletionProtected, ...). */
  conditions: ConditionInput[];
  /** Conditions that replace what status.ts derived, when a step knows better why something waits. */
  overrides: ConditionInput[];
}

/** A step either lets the next one run, or stops the chain (status is still written) and maybe asks to come back. */
export type StepResult = { halt: true; requeueAfterMs?: number } | { requeueAfterMs: number } | undefined;

export interface Step {
  readonly name: string;
  run(ctx: StepContext): Promise<StepResult | undefined>;
}

export const halt = (requeueAfterMs?: number): StepResult =>
  requeueAfterMs === undefined ? { halt: true } : { halt: true, requeueAfterMs };
