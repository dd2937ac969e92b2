// What an in-place restore creates: its safety SampleDBBackup and the Jobs that restore a dump into the SampleDB
// (the backup to restore, or the safety backup when putting it back). Pure builders.
import type { V1Job } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  CONTAINERS,
  KINDS,
  POSTGRES_PORT,
  type SampleDbBackupObject,
  type SampleDbRestoreObject,
} from '../../api/index.ts';
import { TERMINATION_LOG } from '../backup-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { ownerReferenceTo } from '../meta.ts';
import { backupDumpPath, boundedName } from '../names.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv } from '../pod.ts';
import { BACKUP_MOUNT_PATH } from '../scripts/backup.ts';
import { IN_PLACE_RESTORE_SCRIPT, inPlaceRestoreEnv } from '../scripts/in-place-restore.ts';

export const RESTORE_BACKOFF_LIMIT = 0;

export const safetyBackupName = (restoreName: string) => boundedName(restoreName, 'safety');
export const restoreJobName = (restoreName: string) => boundedName(restoreName, 'restore');
export const rollbackJobName = (restoreName: string) => boundedName(restoreName, 'rollback');

const ownedBy = (restore: SampleDbRestoreObject) => [
  ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbRestore, metadata: restore.metadata }),
];

/**
 * The safety backup of the data as it is before the restore. Not owned by the restore: it is the way back, and
 * must outlive the SampleDBRestore object.
 */
export function safetyBackup(
  instance: SampleDbInstance,
  restore: SampleDbRestoreObject,
): SampleDbBackupObject {
  const name = restore.metadata.name ?? '';
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDbBackup,
    metadata: {
      name: safetyBackupName(name),
      namespace: instance.namespace,
      labels: { ...instance.labels.backup },
      annotations: { [ANNOTATIONS.restore]: name },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}

/**
 * The Job that restores `backup` (Completed, with a checksum) into the SampleDB: the backup to restore, or the safety
 * backup (`kind` rollback). No retries: a second pg_restore after a failed one is the rollback's job.
 */
export function inPlaceRestoreJob(
  instance: SampleDbInstance,
  restore: SampleDbRestoreObject,
  backup: SampleDbBackupObject,
  kind: 'restore' | 'rollback',
): V1Job {
  const restoreName = restore.metadata.name ?? '';
  const backupName = backup.metadata.name ?? '';
  const checksum = backup.status?.checksum;
  if (!checksum) throw new Error(`SampleDBBackup ${backupName} has no checksum`);
  const env = inPlaceRestoreEnv({
    host: instance.podHost,
    port: POSTGRES_PORT,
    database: instance.spec.bootstrap.database,
    owner: instance.spec.bootstrap.owner,
    dump: `${BACKUP_MOUNT_PATH}/${backupDumpPath(instance.name, backupName)}`,
    checksum,
    terminationLog: TERMINATION_LOG,
  });
  const labels = { ...instance.labels.backup };
  const annotations = { [ANNOTATIONS.restore]: restoreName };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: kind === 'restore' ? restoreJobName(restoreName) : rollbackJobName(restoreName),
      namespace: instance.namespace,
      labels,
      annotations,
      ownerReferences: ownedBy(restore),
    },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      template: {
        metadata: { labels, annotations },
        spec: scriptJobPodSpec(
          {
            name: CONTAINERS.restore,
            image: instance.spec.image,
            script: IN_PLACE_RESTORE_SCRIPT,
            env: [...literalEnv(env), ...superuserEnv(instance)],
            terminationMessagePath: TERMINATION_LOG,
            volumeMounts: [{ name: 'backups', mountPath: BACKUP_MOUNT_PATH, readOnly: true }],
          },
          [
            {
              name: 'backups',
              persistentVolumeClaim: { claimName: instance.backupClaim.name, readOnly: true },
            },
          ],
        ),
      },
    },
  };
}
