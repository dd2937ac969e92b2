// Reports BackupHealthy (backup-health.ts) from the cache; writes nothing.
import { backupHealth } from '../backup-health.ts';
import { SAMPLEDB_BACKUPS } from '../resources.ts';
import type { Step } from './context.ts';

export const reportBackupHealth: Step = {
  name: 'backup-health',
  writes: [],
  async run({ instance, view, now }) {
    const condition = backupHealth({
      db: instance.object,
      backups: view.list(SAMPLEDB_BACKUPS, instance.namespace),
      now: now(),
    });
    return condition ? { conditions: [condition] } : undefined;
  },
};
