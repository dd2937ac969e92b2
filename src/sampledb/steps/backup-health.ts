// BackupHealthy from the SampleDB's backups (backup-health.ts decides): after the schedule, so it sees the backup the
// schedule may have just created. A SampleDBBackup's status change reconciles its SampleDB, so a failed backup or
// verification shows here at once; an overdue backup is noticed by coming back when it becomes overdue.
import { REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import { decideBackupHealth } from '../backup-health.ts';
import { SAMPLEDB_BACKUPS } from '../resources.ts';
import type { Step } from './context.ts';

export const reportBackupHealth: Step = {
  name: 'backup-health',
  writes: [],
  async run({ instance, view, now }) {
    const db = instance.object;
    const health = decideBackupHealth({
      db,
      backups: view.list(SAMPLEDB_BACKUPS, instance.namespace),
      now: now(),
    });
    if (!health.condition) {
      const had = db.status?.conditions?.some((c) => c.type === SAMPLEDB_CONDITIONS.backupHealthy);
      if (!had) return undefined;
      return {
        conditions: [
          {
            type: SAMPLEDB_CONDITIONS.backupHealthy,
            status: 'Unknown',
            reason: REASONS.noSchedule,
            message: 'Neither spec.backup.schedule nor spec.backup.verify is set: nothing to watch.',
          },
        ],
      };
    }
    return {
      conditions: [health.condition],
      ...(health.recheckAfterMs !== undefined ? { requeueAfterMs: health.recheckAfterMs + 1_000 } : {}),
    };
  },
};
