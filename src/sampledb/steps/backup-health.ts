// Reports BackupHealthy (backup-health.ts) from the cache; writes nothing. Comes back at the overdue deadline, so
// the condition turns False then and not at whatever reconcile happens next (up to a schedule interval later).
import { assessBackupHealth, backupHealthRecheckMs } from '../backup-health.ts';
import { SAMPLEDB_BACKUPS } from '../resources.ts';
import type { Step } from './context.ts';

export const reportBackupHealth: Step = {
  name: 'backup-health',
  writes: [],
  async run({ instance, view, now }) {
    const input = {
      db: instance.object,
      backups: view.list(SAMPLEDB_BACKUPS, instance.namespace),
      now: now(),
    };
    const { condition } = assessBackupHealth(input);
    if (!condition) return undefined;
    const requeueAfterMs = backupHealthRecheckMs(input);
    return requeueAfterMs === undefined
      ? { conditions: [condition] }
      : { conditions: [condition], requeueAfterMs };
  },
};
