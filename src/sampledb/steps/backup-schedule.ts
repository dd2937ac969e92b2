// Scheduled backups: once the database is Ready, creates the SampleDBBackup of the latest schedule slot not yet
// taken (the SampleDBBackup controller runs it) and asks to come back at the next slot. Retention is the next step's
// (backup-retention.ts).
import { REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { decideSchedule, scheduledBackup } from '../backup-schedule.ts';
import { SAMPLEDB_BACKUPS } from '../resources.ts';
import { sampleDbStatus } from '../status.ts';
import type { Step } from './context.ts';

const scheduled = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
  type: SAMPLEDB_CONDITIONS.backupScheduled,
  status,
  reason,
  message,
});

export const scheduleBackups: Step = {
  name: 'backup-schedule',
  writes: ['create-once'],
  async run({ instance, observed, view, write, log, now: clock }) {
    const db = instance.object;
    const { namespace } = instance;
    const now = clock();
    const schedule = db.spec.backup?.schedule;
    const hadCondition = db.status?.conditions?.some((c) => c.type === SAMPLEDB_CONDITIONS.backupScheduled);
    if (!schedule) {
      if (!hadCondition) return undefined;
      return { conditions: [scheduled('False', REASONS.noSchedule, 'spec.backup.schedule is not set.')] };
    }
    const ready = sampleDbStatus(instance, observed, now).phase === 'Ready';
    const backups = view.list(SAMPLEDB_BACKUPS, namespace);
    const decision = decideSchedule({ db, ready, backups, now });
    const zone = db.spec.backup?.timezone ?? 'UTC';
    switch (decision.kind) {
      case 'unscheduled':
        if (decision.reason !== 'Suspended') return undefined;
        return {
          conditions: [
            scheduled('False', REASONS.suspended, 'Scheduled backups are suspended (spec.backup.suspend).'),
          ],
        };
      case 'invalid':
        return {
          conditions: [
            scheduled(
              'False',
              REASONS.invalidSchedule,
              `spec.backup.schedule "${schedule}" (${zone}) cannot be used: ${decision.message}. Fix the schedule or timezone.`,
            ),
          ],
        };
      case 'scheduled':
        break;
    }
    if (decision.due) {
      // Undefined when an earlier run (or another replica before a restart) already created this slot's backup.
      const created = await write.createOnce(
        SAMPLEDB_BACKUPS,
        scheduledBackup(instance, decision.due.name, decision.due.at),
      );
      if (created)
        log.info(
          { backup: decision.due.name, slot: decision.due.at.toISOString() },
          'scheduled backup created',
        );
    }
    return {
      conditions: [
        scheduled('True', REASONS.scheduled, `Backups run on the schedule "${schedule}" (${zone}).`),
      ],
      requeueAfterMs: decision.requeueAfterMs,
    };
  },
};
