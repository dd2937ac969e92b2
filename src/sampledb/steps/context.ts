// The shape of a reconcile step. A step reads from the cache (`view`), builds what it wants with a pure builder,
// writes it the one way it declares (`writes`, enforced by the Writer it gets), and returns what it observed and the
// conditions it sets. `runSteps` (run.ts) folds the outcomes; a later step sees what earlier ones observed, never a
// bag it could write into.
import type { OperatorDefaults, ReplicationStatus, SampleDbObject } from '../../api/index.ts';
import type { Client, ConditionInput, Logger, Stored } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import type { ObservedChildren } from '../status.ts';
import type { ClusterView } from '../view.ts';
import type { WriteMode, Writer } from '../writer.ts';

export { ClusterView } from '../view.ts';

export interface SampleDbDeps {
  client: Client;
  view: ClusterView;
  now?: () => Date;
  /** Operator-wide defaults of the desired objects (the PostgreSQL image repository). */
  defaults?: OperatorDefaults;
}

/** What the SampleDB steps observe; the status is computed from it. */
export interface Observation extends ObservedChildren {
  /** The SampleDB as last written by a step (the finalizer); otherwise the one the reconcile started from. */
  sampleDb?: Stored<SampleDbObject>;
  /** status.replication as the replication step left it (instances > 1). */
  replication?: ReplicationStatus;
}

/** What every step of every table gets. */
export interface StepBase {
  readonly view: ClusterView;
  /** Limited to the step's declared write modes. */
  readonly write: Writer;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly now: () => Date;
}

/** The SampleDB steps' subject: the SampleDB resolved once for this reconcile. */
export interface SampleDbSubject {
  readonly instance: SampleDbInstance;
}

/** `S`: what the table is about (a SampleDB, a SampleDBBackup); `O`: what its steps observe. */
export type StepContext<O = Observation, S = SampleDbSubject> = StepBase &
  S & {
    /** What the steps before this one observed. */
    readonly observed: Readonly<O>;
  };

export interface StepOutcome<O = Observation> {
  readonly observed?: Partial<O>;
  /** Conditions beyond the ones status.ts derives (StorageResized, BackupScheduled, DeletionProtected, ...). */
  readonly conditions?: readonly ConditionInput[];
  /** Conditions that replace what status.ts derived, when a step knows better why something waits. */
  readonly overrides?: readonly ConditionInput[];
  /** Stop the chain here (the status is still written). */
  readonly halt?: boolean;
  /** Come back after this long (the shortest of all steps' wins). */
  readonly requeueAfterMs?: number;
}

export interface Step<O = Observation, S = SampleDbSubject> {
  readonly name: string;
  /** The only ways the step writes; its Writer refuses any other. */
  readonly writes: readonly WriteMode[];
  run(ctx: StepContext<O, S>): Promise<StepOutcome<O> | undefined>;
}

export const halt = (requeueAfterMs?: number): StepOutcome<never> =>
  requeueAfterMs === undefined ? { halt: true } : { halt: true, requeueAfterMs };
