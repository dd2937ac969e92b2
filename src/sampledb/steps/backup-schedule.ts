// Scheduled backups: once the database is Ready, creates the SampleDBBackup of the latest schedule slot not yet
// taken (the SampleDBBackup controller runs it) and asks to come back at the next slot. Retention is computed and
// reported but not applied yet: deleting a SampleDBBackup does not remove its dump from the backup volume, so
// pruning now would only leak files while claiming space was freed.
import {
  REASONS,
  SAMPLEDB_CONDITIONS,
  type SampleDbBackupObject,
  type SampleDbObject,
} from '../../api/index.ts';
import { isStatus } from '../../runtime/index.ts';
import { decideRetention, decideSchedule, scheduledBackup } from '../backup-schedule.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS } from '../resources.ts';
import { sampleDbStatus } from '../status.ts';
import type { Step } from './context.ts';

export const scheduleBackups: Step = {
  name: 'backup-schedule',
  async run(ctx) {
    const { instance, db, view, client } = ctx;
    const { namespace } = instance;
    const now = ctx.now();
    const schedule = db.spec.backup?.schedule;
    const hadCondition = db.status?.conditions?.some((c) => c.type === SAMPLEDB_CONDITIONS.backupScheduled);
    if (!schedule) {
      if (hadCondition)
        ctx.conditions.push({
          type: SAMPLEDB_CONDITIONS.backupScheduled,
          status: 'False',
          reason: REASONS.noSchedule,
          message: 'spec.backup.schedule is not set.',
        });
      return undefined;
    }
    const ready = sampleDbStatus(instance, ctx.observed, now).phase === 'Ready';
    const backups = view.list<SampleDbBackupObject>(SAMPLEDB_BACKUPS, namespace);
    const decision = decideSchedule({ db, ready, backups, now });
    const zone = db.spec.backup?.timezone ?? 'UTC';
    switch (decision.kind) {
      case 'unscheduled':
        if (decision.reason === 'Suspended')
          ctx.conditions.push({
            type: SAMPLEDB_CONDITIONS.backupScheduled,
            status: 'False',
            reason: REASONS.suspended,
            message: 'Scheduled backups are suspended (spec.backup.suspend).',
          });
        return undefined;
      case 'invalid':
        ctx.conditions.push({
          type: SAMPLEDB_CONDITIONS.backupScheduled,
          status: 'False',
          reason: REASONS.invalidSchedule,
          message: `spec.backup.schedule "${schedule}" (${zone}) cannot be used: ${decision.message}. Fix the schedule or timezone.`,
        });
        return undefined;
      case 'scheduled':
        break;
    }
    ctx.conditions.push({
      type: SAMPLEDB_CONDITIONS.backupScheduled,
      status: 'True',
      reason: REASONS.scheduled,
      message: `Backups run on the schedule "${schedule}" (${zone}).`,
    });
    if (decision.due) {
      try {
        await client.create(
          SAMPLEDB_BACKUPS,
          scheduledBackup(instance, decision.due.name, decision.due.at) as never,
        );
        ctx.log.info(
          { backup: decision.due.name, slot: decision.due.at.toISOString() },
          'scheduled backup created',
        );
      } catch (err) {
        // An earlier run (or another replica before a restart) already created this slot's backup.
        if (!isStatus(err, 409)) throw err;
      }
    }
    const retention = decideRetention({
      db,
      backups,
      sampleDbs: view.list<SampleDbObject>(SAMPLEDBS, namespace),
      now,
    });
    if (retention.prune.length > 0)
      ctx.log.debug(
        { wouldPrune: retention.prune },
        'backup retention would prune these backups; pruning is disabled until dump files are removed with them',
      );
    return { requeueAfterMs: decision.requeueAfterMs };
  },
};
