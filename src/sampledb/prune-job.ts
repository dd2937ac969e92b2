// The Job that removes the dump files of the backups retention removes (scripts/prune.ts). One Job per set of
// backups: its name carries a hash of their names, so a re-run after a crash finds the same Job, and a different set
// (a later backup, an object deleted meanwhile) gets its own.
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { boundedName } from './names.ts';
import { literalEnv, scriptJobPodSpec } from './pod.ts';
import { BACKUP_MOUNT_PATH } from './scripts/backup.ts';
import { PRUNE_SCRIPT, pruneScriptEnv } from './scripts/prune.ts';

export const PRUNE_CONTAINER = 'prune';

export function pruneJobName(sampleDbName: string, backupNames: readonly string[]): string {
  const hash = createHash('sha256')
    .update([...backupNames].sort().join('\n'))
    .digest('hex')
    .slice(0, 10);
  return boundedName(sampleDbName, `prune-${hash}`);
}

/** `paths`: the dumps to remove, relative to the backup volume's root (DUMP_PATH_PATTERN). */
export function pruneJob(
  instance: SampleDbInstance,
  backupNames: readonly string[],
  paths: readonly string[],
): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, pruneJobName(instance.name, backupNames), 'backup'),
    spec: {
      backoffLimit: 2,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 600,
      template: {
        metadata: { labels: { ...instance.labels.backup } },
        spec: scriptJobPodSpec(
          {
            name: PRUNE_CONTAINER,
            image: instance.spec.image,
            script: PRUNE_SCRIPT,
            env: literalEnv(pruneScriptEnv({ root: BACKUP_MOUNT_PATH, paths })),
            volumeMounts: [{ name: 'backups', mountPath: BACKUP_MOUNT_PATH }],
          },
          [{ name: 'backups', persistentVolumeClaim: { claimName: instance.backupClaim.name } }],
        ),
      },
    },
  };
}
