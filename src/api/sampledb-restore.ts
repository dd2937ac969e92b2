// The SampleDBRestore API: restore a Completed SampleDBBackup into the existing SampleDB it was taken of, in place
// (ADR 0014). With writes stopped, the backup is restored into a new database and checked, then the names are
// switched in one transaction; the data it replaced is backed up (the safety backup) and then dropped. A failure
// before the switch leaves the live data as it was.
import { type Static, Type } from '@sinclair/typebox';
import type { API_VERSION, KINDS } from './identity.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { ConditionList, ObjectName, StringEnum, withRules } from './schema-kit.ts';

/** `RolledBack` only ends restores started by operators before ADR 0014, whose restore replaced the data in place. */
export const RESTORE_PHASES = ['Pending', 'Running', 'Completed', 'Failed', 'RolledBack'] as const;
export type RestorePhase = (typeof RESTORE_PHASES)[number];

/**
 * The steps of an in-place restore, in order. `rollback` (and `safety-backup` first) belongs to restores started by
 * operators before ADR 0014; a restore started now never needs it, since nothing is replaced before the switch.
 */
export const RESTORE_STEPS = [
  'stop-writes',
  'restore',
  'verify',
  'switch',
  'resume-writes',
  'safety-backup',
  'cleanup',
  'rollback',
] as const;
export type RestoreStepName = (typeof RESTORE_STEPS)[number];
export const RESTORE_STEP_STATES = ['Pending', 'Running', 'Done', 'Failed', 'Skipped'] as const;

export const SampleDbRestoreSpecSchema = withRules(
  Type.Object(
    {
      sampleDB: Type.Object(
        { name: ObjectName({ description: 'The SampleDB in the same namespace whose data is replaced.' }) },
        { description: 'Where to restore.' },
      ),
      backup: Type.Object(
        {
          name: ObjectName({
            description: 'A Completed SampleDBBackup of that SampleDB, in the same namespace.',
          }),
        },
        { description: 'What to restore.' },
      ),
    },
    { description: 'Which backup to restore into which SampleDB. Immutable.' },
  ),
  [
    {
      rule: 'self == oldSelf',
      message: 'a SampleDBRestore spec is immutable; create a new SampleDBRestore instead',
      holdsOnUpdate: (self: unknown, old: unknown) => JSON.stringify(self) === JSON.stringify(old),
    },
  ],
);

export const RestoreStepStatusSchema = Type.Object({
  name: StringEnum(RESTORE_STEPS, { description: 'The step.' }),
  state: StringEnum(RESTORE_STEP_STATES, { description: 'Pending, Running, Done, Failed or Skipped.' }),
  message: Type.Optional(Type.String({ description: 'What the step did or why it failed.' })),
});

export const SampleDbRestoreStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(RESTORE_PHASES, {
        description:
          'Pending, Running, Completed (the backup is live; what it replaced is in the safety backup, or in previousDatabase when that backup failed), Failed (nothing was changed) or RolledBack (restores started before ADR 0014 only: the safety backup was put back).',
      }),
    ),
    step: Type.Optional(StringEnum(RESTORE_STEPS, { description: 'The step running now.' })),
    steps: Type.Optional(
      Type.Array(RestoreStepStatusSchema, { maxItems: 8, description: 'Each step and its state, in order.' }),
    ),
    safetyBackup: Type.Optional(
      Type.String({
        description:
          'The SampleDBBackup of the data the restore replaced, taken from previousDatabase after the switch.',
      }),
    ),
    previousDatabase: Type.Optional(
      Type.String({
        description:
          'The database on the server that holds the data the restore replaced, from the switch until it is dropped (after the safety backup completed; kept when that backup failed).',
      }),
    ),
    restoredAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the restored data was live and clients could connect again.',
      }),
    ),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    completedAt: Type.Optional(Type.String({ format: 'date-time' })),
    writesStoppedAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When client writes were stopped.' }),
    ),
    writesStoppedSeconds: Type.Optional(
      Type.Number({ minimum: 0, description: 'How long clients could not reach the database.' }),
    ),
    message: Type.Optional(Type.String({ description: 'The result, or why it failed.' })),
    conditions: Type.Optional(ConditionList('Completed with reason and message.')),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  },
  { description: 'Observed state of the restore. Written only by the operator.' },
);

export type SampleDbRestoreSpec = Static<typeof SampleDbRestoreSpecSchema>;
export type SampleDbRestoreStatus = Static<typeof SampleDbRestoreStatusSchema>;

export interface SampleDbRestoreObject extends KubeObject {
  apiVersion: typeof API_VERSION;
  kind: typeof KINDS.sampleDbRestore;
  spec: SampleDbRestoreSpec;
  status?: SampleDbRestoreStatus;
}

export const SampleDbRestoreSchema = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'sampledb.io/v1alpha1' })),
  kind: Type.Optional(Type.String({ description: 'SampleDBRestore' })),
  metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
  spec: SampleDbRestoreSpecSchema,
  status: Type.Optional(SampleDbRestoreStatusSchema),
});
