// What to do next about spec.migrations, decided from what the cluster shows and nothing else: the list, the SQL in
// the ConfigMaps (as checksums), what status.migrations records as applied, and the migration Job of this exact list
// (its name carries a hash of the names and checksums, so a grown list or a fixed SQL gets a Job of its own). The
// operator can be killed at any point: the next run finds the same Job, or records what it did.
import { createHash } from 'node:crypto';
import type { MigrationSpec } from '../../api/index.ts';
import type { JobState } from '../job-state.ts';
import type { MigrateResult, MigrationToRun } from '../scripts/migrate.ts';

export interface AppliedMigration {
  name: string;
  checksum: string;
  appliedAt?: string;
}

export interface MigrationsObservation {
  entries: readonly MigrationSpec[];
  /** Migration name → the SQL's sha256 (hex); undefined when the ConfigMap or its key is missing. */
  checksums: Readonly<Record<string, string | undefined>>;
  /** status.migrations. */
  applied: readonly AppliedMigration[];
  /** The database is initialized and serves, and no upgrade is under way. */
  databaseReady: boolean;
  /** The Job for `migrationsJobHash` of this list, if it exists. */
  job?: { state: JobState; result?: MigrateResult; finishedAt?: string; message?: string };
  now: Date;
}

export const MIGRATION_REASONS = {
  applied: 'MigrationsApplied',
  applying: 'ApplyingMigrations',
  waitingForDatabase: 'WaitingForDatabase',
  sqlMissing: 'MigrationSQLMissing',
  changed: 'MigrationChanged',
  removed: 'MigrationRemoved',
  failed: 'MigrationFailed',
} as const;

export type MigrationsAction =
  /** Nothing to run: no list. */
  | { kind: 'none' }
  | { kind: 'done'; applied: AppliedMigration[] }
  | { kind: 'wait'; reason: string; message: string }
  | { kind: 'create-job'; migrations: MigrationToRun[]; pending: string[] }
  | { kind: 'wait-job'; pending: string[] }
  /** A condition False with reason and message, and an Event; `applied` is what status.migrations becomes. */
  | { kind: 'refuse'; reason: string; migration: string; message: string; applied: AppliedMigration[] };

/** A short hash of the whole list (names and checksums, in order): the migration Job's name suffix. */
export function migrationsJobHash(migrations: readonly MigrationToRun[]): string {
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(`${m.name}\0${m.checksum}\n`);
  return hash.digest('hex').slice(0, 10);
}

export function planMigrations(obs: MigrationsObservation): MigrationsAction {
  const { entries, applied } = obs;
  if (entries.length === 0 && applied.length === 0) return { kind: 'none' };

  // What is recorded applied must stay the head of the list, unchanged: the database has run exactly that.
  for (const [i, done] of applied.entries()) {
    const entry = entries[i];
    if (!entry || entry.name !== done.name) {
      const at = entries.findIndex((e) => e.name === done.name);
      return {
        kind: 'refuse',
        reason: MIGRATION_REASONS.removed,
        migration: done.name,
        message:
          at < 0
            ? `Migration ${done.name} was applied and is no longer in spec.migrations: an applied migration cannot be undone by removing it. Put it back (first ${applied.length} entries: ${applied.map((a) => a.name).join(', ')}) and add a new migration that reverts it.`
            : `Migration ${done.name} was applied as entry ${i + 1} and is now entry ${at + 1}: applied migrations keep their order. Put the first ${applied.length} entries back in the order they were applied (${applied.map((a) => a.name).join(', ')}); append new ones after them.`,
        applied: [...applied],
      };
    }
    const checksum = obs.checksums[entry.name];
    if (checksum !== undefined && checksum !== done.checksum) {
      return {
        kind: 'refuse',
        reason: MIGRATION_REASONS.changed,
        migration: entry.name,
        message: `Migration ${entry.name} was applied with sha256:${done.checksum}; its SQL (ConfigMap ${entry.configMap.name}, key ${entry.configMap.key}) now has sha256:${checksum}. An applied migration is never run again: put its SQL back and append a new migration with the change.`,
        applied: [...applied],
      };
    }
  }

  const missing = entries.filter((e) => obs.checksums[e.name] === undefined);
  if (missing.length > 0) {
    const first = missing[0] as MigrationSpec;
    return {
      kind: 'refuse',
      reason: MIGRATION_REASONS.sqlMissing,
      migration: first.name,
      message: `The SQL of migration ${first.name} is missing: ConfigMap ${first.configMap.name} (key ${first.configMap.key}) does not exist or has no such key. Migrations wait until it does.`,
      applied: [...applied],
    };
  }
  const migrations = entries.map((e) => ({ name: e.name, checksum: obs.checksums[e.name] as string }));
  if (applied.length === entries.length) return { kind: 'done', applied: [...applied] };

  const pending = entries.slice(applied.length).map((e) => e.name);
  const job = obs.job;
  if (!job) {
    if (!obs.databaseReady) {
      return {
        kind: 'wait',
        reason: MIGRATION_REASONS.waitingForDatabase,
        message: `Migrations ${pending.join(', ')} wait until the database is initialized, ready and not being upgraded.`,
      };
    }
    return { kind: 'create-job', migrations, pending };
  }
  if (job.state === 'running') return { kind: 'wait-job', pending };

  const at = job.finishedAt ?? obs.now.toISOString();
  const record = (count: number): AppliedMigration[] => [
    ...applied,
    ...migrations
      .slice(applied.length, Math.max(applied.length, count))
      .map((m) => ({ ...m, appliedAt: at })),
  ];
  if (job.state === 'succeeded') return { kind: 'done', applied: record(migrations.length) };

  const result = job.result;
  const name = result?.migration ?? pending[0] ?? '';
  const done = record(result?.applied ?? applied.length);
  if (result?.result === 'changed') {
    return {
      kind: 'refuse',
      reason: MIGRATION_REASONS.changed,
      migration: name,
      message:
        `Migration ${name} is recorded in the database (sampledb_operator.migrations) with other SQL than it has now: ${result.error ?? ''}`.trim(),
      applied: done,
    };
  }
  const later = pending.filter((n) => n !== name && !done.some((d) => d.name === n));
  return {
    kind: 'refuse',
    reason: MIGRATION_REASONS.failed,
    migration: name,
    message:
      `Migration ${name} failed and was rolled back: ${result?.error ?? job.message ?? 'the migration Job failed'}.` +
      (later.length > 0 ? ` Later migrations wait: ${later.join(', ')}.` : '') +
      ' Fix its SQL in the ConfigMap (it was not applied, so it may change); a new Job runs then.',
    applied: done,
  };
}
