// Verified backups: the SampleDB's `backup.verify` and `backup.verifyQuery`, and what a SampleDBBackup records about
// the verification of its dump (restored into a temporary server, checked against what the backup recorded).
import { Type } from '@sinclair/typebox';
import { ObjectName, StringEnum } from './schema-kit.ts';

export const BackupVerifySchema = Type.Boolean({
  default: false,
  description:
    'Verify every backup that completes: a Job restores the dump into a temporary server inside its own pod and ' +
    'checks the per-table row counts (and verifyQuery) against those the backup recorded in its snapshot. The ' +
    'SampleDBBackup records the result and the restore time; BackupHealthy turns False when one fails. ' +
    'Default: false.',
});

export const VerifyQuerySchema = Type.Object(
  {
    name: ObjectName({ description: 'A ConfigMap in the same namespace.' }),
    key: Type.String({
      pattern: '^[-._a-zA-Z0-9]+$',
      maxLength: 253,
      description: 'The key holding the SQL, e.g. "verify.sql".',
    }),
  },
  {
    description:
      'A SQL query (from a ConfigMap) the backup runs in its snapshot and the verification runs on the restored ' +
      'copy: both outputs must be equal. Needs verify: true.',
  },
);

/** A verification rule on `spec.backup` (its TypeScript twin is here too). */
export const VERIFY_QUERY_RULE = {
  rule: '!has(self.verifyQuery) || (has(self.verify) && self.verify)',
  message: 'backup.verifyQuery needs backup.verify: true',
  fieldPath: '.verifyQuery',
  holds: (self: { verify?: boolean; verifyQuery?: unknown }) =>
    self.verifyQuery === undefined || self.verify === true,
};

export const VERIFICATION_PHASES = ['Pending', 'Running', 'Verified', 'Failed'] as const;
export type VerificationPhase = (typeof VERIFICATION_PHASES)[number];

export const BackupVerificationStatusSchema = Type.Object(
  {
    phase: StringEnum(VERIFICATION_PHASES, {
      description: 'Pending (waits for its Job), Running, Verified or Failed.',
    }),
    startedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When verification began.' })),
    completedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it finished.' })),
    restoreSeconds: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'Measured time pg_restore took into an empty server: this backup’s restore time (RTO).',
      }),
    ),
    tables: Type.Optional(Type.Integer({ minimum: 0, description: 'Tables checked.' })),
    rows: Type.Optional(
      Type.Integer({ minimum: 0, format: 'int64', description: 'Rows counted, as recorded.' }),
    ),
    query: Type.Optional(Type.Boolean({ description: 'The verifyQuery was checked too.' })),
    message: Type.Optional(Type.String({ description: 'The result, or why the verification failed.' })),
  },
  { description: 'The verification of this backup (spec.backup.verify of its SampleDB).' },
);
