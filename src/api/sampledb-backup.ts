// The SampleDBBackup API: one logical backup of a SampleDB, made on demand or by the SampleDB's schedule.
import { type Static, Type } from '@sinclair/typebox';
import { BackupVerificationStatusSchema } from './backup-verification.ts';
import type { API_VERSION, KINDS } from './identity.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { ConditionList, ObjectName, StringEnum, withRules } from './schema-kit.ts';

export const BACKUP_METHODS = ['pg_dump'] as const;
export const BACKUP_PHASES = ['Pending', 'Running', 'Completed', 'Failed'] as const;

export const SampleDbBackupSpecSchema = withRules(
  Type.Object(
    {
      sampleDB: Type.Object(
        { name: ObjectName({ description: 'Name of the SampleDB in the same namespace.' }) },
        { description: 'The database to back up.' },
      ),
      method: Type.Optional(
        StringEnum(BACKUP_METHODS, {
          default: 'pg_dump',
          description: 'How the backup is taken. pg_dump: a logical dump in custom format. Default: pg_dump.',
        }),
      ),
    },
    {
      description:
        'Which database to back up, and how. Immutable: create a new SampleDBBackup for a new backup.',
    },
  ),
  [
    {
      rule: 'self == oldSelf',
      message: 'a SampleDBBackup spec is immutable; create a new SampleDBBackup instead',
      holdsOnUpdate: (self: unknown, old: unknown) => JSON.stringify(self) === JSON.stringify(old),
    },
  ],
);

export const SampleDbBackupStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(BACKUP_PHASES, { description: 'Pending, Running, Completed or Failed.' }),
    ),
    startedAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the backup Job started.' }),
    ),
    completedAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the backup completed.' }),
    ),
    sizeBytes: Type.Optional(
      Type.Integer({ minimum: 0, format: 'int64', description: 'Size of the dump in bytes.' }),
    ),
    checksum: Type.Optional(
      Type.String({
        pattern: '^sha256:[0-9a-f]{64}$',
        description: 'sha256 of the dump file, "sha256:<hex>".',
      }),
    ),
    location: Type.Optional(
      Type.String({ description: 'Where the dump is: "pvc://<claim>/<path>" on the backup volume.' }),
    ),
    message: Type.Optional(Type.String({ description: 'Why the backup failed, or what it is waiting for.' })),
    verified: Type.Optional(
      Type.Boolean({
        description: 'The dump was restored and checked (spec.backup.verify); false: it failed.',
      }),
    ),
    verification: Type.Optional(BackupVerificationStatusSchema),
    conditions: Type.Optional(ConditionList('Detailed state with reasons and messages.')),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  },
  { description: 'Observed state of the backup. Written only by the operator.' },
);

export type SampleDbBackupSpec = Static<typeof SampleDbBackupSpecSchema>;
export type SampleDbBackupStatus = Static<typeof SampleDbBackupStatusSchema>;
export type BackupPhase = (typeof BACKUP_PHASES)[number];

export interface SampleDbBackupObject extends KubeObject {
  apiVersion: typeof API_VERSION;
  kind: typeof KINDS.sampleDbBackup;
  spec: SampleDbBackupSpec;
  status?: SampleDbBackupStatus;
}

/** The whole SampleDBBackup object as stored. */
export const SampleDbBackupSchema = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'sampledb.io/v1alpha1' })),
  kind: Type.Optional(Type.String({ description: 'SampleDBBackup' })),
  metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
  spec: SampleDbBackupSpecSchema,
  status: Type.Optional(SampleDbBackupStatusSchema),
});
