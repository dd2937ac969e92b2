// SampleDBBackup status from what the backup steps observed (its SampleDB, its Job and the Job's pods): pure.
// Success is only ever what the backup container itself reported in its termination message (size and sha256 of the
// dump it wrote); a Job that "succeeded" without that report is a failed backup, never a completed one.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  BACKUP_CONDITIONS,
  CONTAINERS,
  REASONS,
  type SampleDbBackupObject,
  type SampleDbBackupStatus,
} from '../../api/index.ts';
import { type Condition, mergeConditions, metaTime } from '../../runtime/index.ts';
import { backupLocation } from '../backup-job.ts';
import { parseBackupResult } from '../scripts/backup.ts';
import { verifiesBackups } from '../verify-job.ts';
import { scriptJobOutcome } from './job-outcome.ts';
import { insufficientMessage } from './space.ts';
import type { BackupObservation } from './steps.ts';
import { pendingVerification } from './verification.ts';

export type BackupOutcome =
  | { phase: 'Running' }
  | { phase: 'Completed'; sizeBytes: number; checksum: string; completedAt: string }
  | { phase: 'Failed'; reason: string; message: string };

export function backupOutcome(job: V1Job, pods: readonly V1Pod[]): BackupOutcome {
  const outcome = scriptJobOutcome(job, pods, CONTAINERS.backup, parseBackupResult);
  switch (outcome.phase) {
    case 'Succeeded':
      return { phase: 'Completed', ...outcome.result, completedAt: outcome.finishedAt };
    case 'NoResult':
      return {
        phase: 'Failed',
        reason: REASONS.noResult,
        message:
          'the backup Job succeeded but its container reported no result (a JSON line with sizeBytes and checksum in its termination message): the dump cannot be trusted',
      };
    default:
      return outcome;
  }
}

/** The status for an outcome, keeping what the previous status knew (startedAt, conditions' transition times). */
export function backupStatus(
  previous: SampleDbBackupStatus | undefined,
  outcome: BackupOutcome,
  location: string,
  generation: number | undefined,
  now: Date,
  verify = false,
): SampleDbBackupStatus {
  const prior = (previous?.conditions ?? []) as Condition[];
  const startedAt = previous?.startedAt ?? metaTime(now);
  const base = {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    startedAt,
    location,
  };
  switch (outcome.phase) {
    case 'Running':
      return {
        ...base,
        phase: 'Running',
        message: 'The backup Job is running pg_dump.',
        conditions: mergeConditions(
          prior,
          [
            {
              type: BACKUP_CONDITIONS.completed,
              status: 'False',
              reason: REASONS.running,
              message: 'pg_dump is running.',
            },
          ],
          now,
        ),
      };
    case 'Completed': {
      const completed: SampleDbBackupStatus = {
        ...base,
        phase: 'Completed',
        completedAt: outcome.completedAt,
        sizeBytes: outcome.sizeBytes,
        checksum: outcome.checksum,
        message: `Dump written to ${location}.`,
        conditions: mergeConditions(
          prior,
          [
            {
              type: BACKUP_CONDITIONS.completed,
              status: 'True',
              reason: REASONS.backupCompleted,
              message: `Dump written to ${location}.`,
            },
            {
              type: BACKUP_CONDITIONS.failed,
              status: 'False',
              reason: REASONS.backupCompleted,
              message: 'The backup completed.',
            },
          ],
          now,
        ),
      };
      return verify
        ? { ...completed, ...pendingVerification((completed.conditions ?? []) as Condition[], now) }
        : completed;
    }
    case 'Failed':
      return {
        ...base,
        phase: 'Failed',
        message: outcome.message,
        conditions: mergeConditions(
          prior,
          [
            {
              type: BACKUP_CONDITIONS.completed,
              status: 'False',
              reason: outcome.reason,
              message: outcome.message,
            },
            {
              type: BACKUP_CONDITIONS.failed,
              status: 'True',
              reason: outcome.reason,
              message: outcome.message,
            },
          ],
          now,
        ),
      };
  }
}

function pending(previous: SampleDbBackupStatus | undefined, reason: string, message: string, now: Date) {
  return {
    ...previous,
    phase: 'Pending' as const,
    message,
    conditions: mergeConditions(
      (previous?.conditions ?? []) as Condition[],
      [{ type: BACKUP_CONDITIONS.completed, status: 'False', reason, message }],
      now,
    ),
  };
}

/** The status for what the backup steps observed. */
export function backupStatusFor(
  backup: SampleDbBackupObject,
  observed: BackupObservation,
  now: Date,
): SampleDbBackupStatus {
  const dbName = backup.spec.sampleDB.name;
  const { instance, job } = observed;
  if (!instance)
    return pending(
      backup.status,
      REASONS.sampleDbNotFound,
      `SampleDB ${dbName} was not found in this namespace.`,
      now,
    );
  if (!job && observed.waitingFor)
    return pending(
      backup.status,
      REASONS.waitingForBackup,
      `Waiting for ${observed.waitingFor}: one backup of SampleDB ${dbName} runs at a time.`,
      now,
    );
  const space = observed.space;
  if (!job && space?.kind === 'insufficient') {
    const message = insufficientMessage(instance.backupClaim.name, space);
    return backupStatus(
      backup.status,
      { phase: 'Failed', reason: REASONS.backupVolumeFull, message },
      backupLocation(instance, backup.metadata.name ?? ''),
      backup.metadata.generation,
      now,
    );
  }
  if (!job && (space?.kind === 'grow' || space?.kind === 'growing'))
    return pending(
      backup.status,
      REASONS.growingBackupVolume,
      space.kind === 'grow'
        ? `Growing the backup volume ${instance.backupClaim.name} to ${space.to} for the next dump.`
        : `The backup volume ${instance.backupClaim.name} was asked for ${space.requested} and has ${space.capacity} so far.`,
      now,
    );
  if (!job)
    return pending(
      backup.status,
      REASONS.databaseNotReady,
      `Waiting for SampleDB ${dbName} to accept connections before pg_dump can run.`,
      now,
    );
  const outcome: BackupOutcome = observed.started
    ? { phase: 'Running' }
    : backupOutcome(job, observed.pods ?? []);
  return backupStatus(
    backup.status,
    outcome,
    backupLocation(instance, backup.metadata.name ?? ''),
    backup.metadata.generation,
    now,
    verifiesBackups(instance),
  );
}
