// Schema migrations of a SampleDB: an ordered list of SQL files (from ConfigMaps), each applied once, as the owner,
// in its own transaction, recorded in the database (sampledb_operator.migrations) and in status.migrations.
// See docs/upgrades.md ("Migrations").
import { Type } from '@sinclair/typebox';
import { ObjectName, withRules } from './schema-kit.ts';

export const MAX_MIGRATIONS = 64;
export const MIGRATION_NAME_PATTERN = '^[a-z0-9]([-_.a-z0-9]*[a-z0-9])?$';

export const MigrationSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: MIGRATION_NAME_PATTERN,
      description:
        'Identifies the migration in the record table, e.g. "0001-create-accounts". Once applied, its SQL may not change.',
    }),
    configMap: Type.Object(
      {
        name: ObjectName({ description: 'A ConfigMap in the same namespace.' }),
        key: Type.String({
          pattern: '^[-._a-zA-Z0-9]+$',
          maxLength: 253,
          description: 'The key holding the SQL, e.g. "0001.sql".',
        }),
      },
      { description: 'Where the SQL is.' },
    ),
  },
  { description: 'One migration: SQL applied once, as the owner, in one transaction.' },
);

export const MIGRATION_NAMES_UNIQUE_MESSAGE = 'migrations names must be unique: each name is applied once';

/** `spec.migrations`: applied in order; appending runs only the new entries. */
export const MigrationsSpecSchema = withRules(
  Type.Array(MigrationSchema, {
    maxItems: MAX_MIGRATIONS,
    description:
      'SQL migrations applied in order, each once, as the owner, in its own transaction, after the database is ' +
      'initialized and after an upgrade completes. Append to add one; editing an applied one is refused ' +
      '(condition Migrated=False, reason MigrationChanged).',
  }),
  [
    {
      rule: 'self.all(m, self.exists_one(n, n.name == m.name))',
      message: MIGRATION_NAMES_UNIQUE_MESSAGE,
      reason: 'FieldValueDuplicate',
      holds: (self: readonly { name: string }[]) => new Set(self.map((m) => m.name)).size === self.length,
    },
  ],
);

export type MigrationSpec = { name: string; configMap: { name: string; key: string } };

/** `status.migrations`: the migrations the database has recorded as applied. */
export const MigrationsStatusSchema = Type.Array(
  Type.Object({
    name: Type.String({ maxLength: 63, description: 'The migration.' }),
    checksum: Type.String({ maxLength: 64, description: 'sha256 (hex) of the SQL that was applied.' }),
    appliedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it was applied.' })),
  }),
  { maxItems: MAX_MIGRATIONS, description: 'Applied migrations, in order, as recorded in the database.' },
);
