// spec.backup.retention, enforced after each backup: decideRetention (backup-schedule.ts) says which backups go,
// planPrune (backup/prune.ts) the next action: a Job removes their dump files, then their SampleDBBackup objects
// are deleted, each removal an Event on the SampleDB.
import { EVENT_REASONS } from '../../api/index.ts';
import { planPrune, pruneTargets } from '../backup/prune.ts';
import { decideRetention } from '../backup-schedule.ts';
import { jobState } from '../job-state.ts';
import { pruneJob, pruneJobName } from '../prune-job.ts';
import { JOBS, SAMPLEDB_BACKUPS, SAMPLEDBS } from '../resources.ts';
import type { Step } from './context.ts';

export const enforceRetention: Step = {
  name: 'backup-retention',
  writes: ['create-once', 'delete', 'event'],
  async run({ instance, view, write, log, now }) {
    const db = instance.object;
    if (!db.spec.backup?.retention) return undefined;
    const { namespace } = instance;
    const backups = view.list(SAMPLEDB_BACKUPS, namespace);
    const retention = decideRetention({
      db,
      backups,
      sampleDbs: view.list(SAMPLEDBS, namespace),
      now: now(),
    });
    const base = {
      dbName: instance.name,
      claimName: instance.backupClaim.name,
      prune: retention.prune,
      backups,
    };
    const jobName = pruneJobName(instance.name, pruneTargets({ ...base, job: undefined }).names);
    const job = view.get(JOBS, namespace, jobName);
    const action = planPrune({ ...base, job: job ? jobState(job) : undefined });
    switch (action.kind) {
      case 'none':
      case 'wait-backup':
      case 'wait-job':
        return undefined;
      case 'run-job':
        await write.createOnce(JOBS, pruneJob(instance, action.names, action.paths));
        log.info({ backups: action.names, job: jobName }, 'removing the dumps of backups retention removes');
        return undefined;
      case 'delete-objects':
        for (const name of action.names) {
          if (!(await write.delete(SAMPLEDB_BACKUPS, { namespace, name }))) continue;
          await write.event({
            regarding: db,
            type: 'Normal',
            reason: EVENT_REASONS.backupPruned,
            action: 'Prune',
            note: `Removed SampleDBBackup ${name} and its dump (spec.backup.retention).`,
          });
        }
        return undefined;
      case 'job-failed':
        await write.event({
          regarding: db,
          type: 'Warning',
          reason: EVENT_REASONS.backupPruneFailed,
          action: 'Prune',
          note: `Job ${jobName} could not remove the dumps of ${action.names.join(', ')}; they and their SampleDBBackups are kept (kubectl logs job/${jobName}).`,
        });
        return undefined;
    }
  },
};
