// The SampleDB's BackupHealthy condition, decided from the SampleDB, its SampleDBBackups and the clock alone: pure.
// False when the latest scheduled backup failed, when no backup completed within twice the schedule's interval, or
// when the latest finished verification failed (spec.backup.verify). Not reported when neither a schedule nor
// verification is set: there is no promise to keep.
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
  /** SampleDBBackups of the namespace (any SampleDB; filtered here). */
  backups: readonly SampleDbBackupObject[];
  now: Date;
}

export interface BackupHealth {
  condition?: ConditionInput;
  /** When the answer changes by the clock alone (a backup becomes overdue). */
  recheckAfterMs?: number;
}

const time = (value: string | undefined) => {
  const t = Date.parse(value ?? '');
  return Number.isFinite(t) ? t : undefined;
};

const healthy = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
  type: SAMPLEDB_CONDITIONS.backupHealthy,
  status,
  reason,
  message,
});

/** The schedule's interval near `now` (the gap between its next two runs); undefined when it cannot be read. */
function scheduleIntervalMs(db: SampleDbObject, now: Date): number | undefined {
  const schedule = db.spec.backup?.schedule;
  if (!schedule) return undefined;
  try {
    const [first, second] = cronFor(schedule, db.spec.backup?.timezone).nextRuns(2, now);
    return first && second ? second.getTime() - first.getTime() : undefined;
  } catch {
    return undefined;
  }
}

export function decideBackupHealth(input: BackupHealthInput): BackupHealth {
  const { db, now } = input;
  const spec = db.spec.backup;
  const scheduled = Boolean(spec?.schedule) && !spec?.suspend;
  if (!scheduled && !spec?.verify) return {};
  const mine = input.backups.filter(
    (b) => b.spec?.sampleDB?.name === db.metadata.name && !b.metadata.deletionTimestamp,
  );

  const latestScheduled = mine
    .filter((b) => b.metadata.labels?.[LABELS.trigger] === TRIGGER_SCHEDULE)
    .sort((a, b) =>
      String(a.metadata.annotations?.[ANNOTATIONS.scheduledAt]).localeCompare(
        String(b.metadata.annotations?.[ANNOTATIONS.scheduledAt]),
      ),
    )
    .at(-1);
  if (scheduled && latestScheduled?.status?.phase === 'Failed')
    return {
      condition: healthy(
        'False',
        REASONS.backupFailed,
        `The latest scheduled backup ${latestScheduled.metadata.name} failed: ${latestScheduled.status.message ?? 'see its status'}.`,
      ),
    };

  const verified = mine
    .filter((b) => b.status?.verification?.phase === 'Verified' || b.status?.verification?.phase === 'Failed')
    .sort((a, b) =>
      String(a.status?.verification?.completedAt).localeCompare(String(b.status?.verification?.completedAt)),
    )
    .at(-1);
  if (spec?.verify && verified?.status?.verification?.phase === 'Failed')
    return {
      condition: healthy(
        'False',
        REASONS.verificationFailed,
        `Backup ${verified.metadata.name} failed verification: ${verified.status.verification.message ?? 'see its status'}`,
      ),
    };

  let recheckAfterMs: number | undefined;
  const interval = scheduled ? scheduleIntervalMs(db, now) : undefined;
  if (interval !== undefined) {
    const completed = mine
      .map((b) => (b.status?.phase === 'Completed' ? time(b.status.completedAt) : undefined))
      .filter((t): t is number => t !== undefined);
    // A new SampleDB has had no chance to back up yet: it counts from its creation.
    const since = Math.max(...completed, time(db.metadata.creationTimestamp) ?? now.getTime());
    const overdueAt = since + 2 * interval;
    if (now.getTime() >= overdueAt) {
      const last = completed.length > 0 ? new Date(Math.max(...completed)).toISOString() : 'never';
      return {
        condition: healthy(
          'False',
          REASONS.noRecentBackup,
          `No backup completed within twice the schedule's interval (${Math.round((2 * interval) / 60_000)} min); the last completed ${last}.`,
        ),
      };
    }
    recheckAfterMs = overdueAt - now.getTime();
  }
  const parts = [
    ...(scheduled ? ['scheduled backups succeed and are recent'] : []),
    ...(spec?.verify
      ? [verified ? `the latest verification (${verified.metadata.name}) passed` : 'no backup verified yet']
      : []),
  ];
  return {
    condition: healthy('True', REASONS.backupsHealthy, `Backups are healthy: ${parts.join('; ')}.`),
    ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}),
  };
}
