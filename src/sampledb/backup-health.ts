// The BackupHealthy condition: can the SampleDB's owner count on a recent backup? Pure, from the SampleDB, its
// SampleDBBackups and the clock. False when the latest scheduled backup failed, or when no backup completed within
// twice the schedule's interval (since the SampleDB exists), or when the latest finished verification of a backup
// failed (spec.backup.verify); no condition without an active schedule or verification.
import {
  ANNOTATIONS,
  LABELS,
  REASONS,
  SAMPLEDB_CONDITIONS,
  type SampleDbBackupObject,
  type SampleDbObject,
  TRIGGER_SCHEDULE,
} from '../api/index.ts';
import type { ConditionInput } from '../runtime/index.ts';
import { cronFor } from './backup-schedule.ts';

export interface BackupHealthInput {
  db: SampleDbObject;
  /** SampleDBBackups in the namespace (any SampleDB; filtered here). */
  backups: readonly SampleDbBackupObject[];
  now: Date;
}

const time = (value: string | undefined) => {
  const t = Date.parse(value ?? '');
  return Number.isFinite(t) ? t : undefined;
};

/** The time between two consecutive runs of the schedule after `now`; undefined when it cannot be computed. */
export function scheduleIntervalMs(
  schedule: string,
  timezone: string | undefined,
  now: Date,
): number | undefined {
  try {
    const [first, second] = cronFor(schedule, timezone).nextRuns(2, now);
    return first && second ? second.getTime() - first.getTime() : undefined;
  } catch {
    return undefined;
  }
}

function duration(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 48
    ? `${Math.round(hours / 24)}d`
    : hours >= 1
      ? `${Math.round(hours)}h`
      : `${Math.round(ms / 60_000)}m`;
}

interface Health {
  condition: ConditionInput | undefined;
  /**
   * When the condition changes with nothing else happening (epoch ms): the instant the overdue deadline (twice the
   * interval after the last completed backup, or after creation) passes while it is True. Undefined when only an
   * event (a backup finishing) can change it.
   */
  changesAt?: number;
}

function scheduleHealth({ db, backups, now }: BackupHealthInput): Health {
  const spec = db.spec.backup;
  if (!spec?.schedule || spec.suspend) return { condition: undefined };
  const interval = scheduleIntervalMs(spec.schedule, spec.timezone, now);
  if (interval === undefined) return { condition: undefined };
  const type = SAMPLEDB_CONDITIONS.backupHealthy;
  const mine = backups.filter(
    (b) => b.spec?.sampleDB?.name === db.metadata.name && !b.metadata.deletionTimestamp,
  );

  const scheduled = mine
    .filter((b) => b.metadata.labels?.[LABELS.trigger] === TRIGGER_SCHEDULE)
    .filter((b) => b.status?.phase === 'Completed' || b.status?.phase === 'Failed')
    .sort(
      (a, b) =>
        (time(b.metadata.annotations?.[ANNOTATIONS.scheduledAt]) ?? 0) -
        (time(a.metadata.annotations?.[ANNOTATIONS.scheduledAt]) ?? 0),
    );
  const latest = scheduled[0];
  if (latest?.status?.phase === 'Failed') {
    const condition: ConditionInput = {
      type,
      status: 'False',
      reason: REASONS.latestBackupFailed,
      message: `The latest scheduled backup ${latest.metadata.name} failed: ${latest.status.message ?? 'see its status'}.`,
    };
    return { condition };
  }

  const lastCompleted = Math.max(
    ...mine.filter((b) => b.status?.phase === 'Completed').map((b) => time(b.status?.completedAt) ?? 0),
    0,
  );
  const since = Math.max(lastCompleted, time(db.metadata.creationTimestamp) ?? 0);
  const allowed = 2 * interval;
  if (since > 0 && now.getTime() - since > allowed) {
    const condition: ConditionInput = {
      type,
      status: 'False',
      reason: REASONS.noRecentBackup,
      message: `No backup completed in the last ${duration(allowed)} (twice the schedule's interval)${lastCompleted > 0 ? `; the last completed at ${new Date(lastCompleted).toISOString()}` : ''}.`,
    };
    return { condition };
  }
  const condition: ConditionInput = {
    type,
    status: 'True',
    reason: REASONS.backupsHealthy,
    message:
      lastCompleted > 0
        ? `The last backup completed at ${new Date(lastCompleted).toISOString()}.`
        : 'No backup is due yet.',
  };
  // Overdue is `now - since > allowed`: the first whole millisecond past the deadline.
  return since > 0 ? { condition, changesAt: since + allowed + 1 } : { condition };
}

/** False when the latest finished verification (spec.backup.verify) of this SampleDB's backups failed. */
function verificationHealth({ db, backups }: BackupHealthInput): ConditionInput | undefined {
  if (!db.spec.backup?.verify) return undefined;
  const latest = backups
    .filter((b) => b.spec?.sampleDB?.name === db.metadata.name && !b.metadata.deletionTimestamp)
    .filter((b) => b.status?.verification?.phase === 'Verified' || b.status?.verification?.phase === 'Failed')
    .sort((a, b) =>
      String(a.status?.verification?.completedAt).localeCompare(String(b.status?.verification?.completedAt)),
    )
    .at(-1);
  const type = SAMPLEDB_CONDITIONS.backupHealthy;
  if (latest?.status?.verification?.phase === 'Failed')
    return {
      type,
      status: 'False',
      reason: REASONS.verificationFailed,
      message: `Backup ${latest.metadata.name} failed verification: ${latest.status.verification.message ?? 'see its status'}`,
    };
  return {
    type,
    status: 'True',
    reason: REASONS.backupsHealthy,
    message: latest ? `The latest verification (${latest.metadata.name}) passed.` : 'No backup verified yet.',
  };
}

/** The condition, and when it turns False by itself (the earliest upcoming deadline), if it will. */
export function assessBackupHealth(input: BackupHealthInput): Health {
  const verification = verificationHealth(input);
  if (verification?.status === 'False') return { condition: verification };
  const schedule = scheduleHealth(input);
  return schedule.condition ? schedule : { condition: verification };
}

export function backupHealth(input: BackupHealthInput): ConditionInput | undefined {
  return assessBackupHealth(input).condition;
}

/** A timer of Node fires at once past 2^31-1 ms (~24.8 days): a far deadline is re-checked before then. */
const MAX_RECHECK_MS = 24 * 3_600_000;

/**
 * The requeue that reports the overdue deadline AT the deadline rather than at the next unrelated reconcile:
 * milliseconds from `now` to when the condition changes by itself (at least 1 s, at most a day), or undefined.
 */
export function backupHealthRecheckMs(input: BackupHealthInput): number | undefined {
  const { changesAt } = assessBackupHealth(input);
  if (changesAt === undefined) return undefined;
  return Math.min(MAX_RECHECK_MS, Math.max(1_000, changesAt - input.now.getTime()));
}
