// What an in-place restore creates (ADR 0014): the Job that restores a dump into a new database and switches it in,
// the safety SampleDBBackup of the data it replaced, and the Job that drops what is no longer needed. Pure builders.
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
import { backupDumpPath, boundedName, restorePreviousDatabase, restoreStagingDatabase } from '../names.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv } from '../pod.ts';
import { BACKUP_MOUNT_PATH } from '../scripts/backup.ts';
import { DROP_DATABASES_SCRIPT, dropDatabasesEnv } from '../scripts/drop-databases.ts';
import { IN_PLACE_RESTORE_SCRIPT, inPlaceRestoreEnv } from '../scripts/in-place-restore.ts';

export const RESTORE_BACKOFF_LIMIT = 0;

export const safetyBackupName = (restoreName: string) => boundedName(restoreName, 'safety');
export const restoreJobName = (restoreName: string) => boundedName(restoreName, 'restore');
export const rollbackJobName = (restoreName: string) => boundedName(restoreName, 'rollback');
export const cleanupJobName = (restoreName: string) => boundedName(restoreName, 'cleanup');

/** The value of the restore-method annotation on restore Jobs that restore into a new database and switch it in. */
export const SWITCH_METHOD = 'switch';

/** The two databases of a restore: what it restores into, and what the live data is renamed to at the switch. */
export function restoreDatabases(instance: SampleDbInstance, restoreName: string) {
  const database = instance.spec.bootstrap.database;
  return {
    staging: restoreStagingDatabase(database),
    previous: restorePreviousDatabase(database, restoreName),
  };
}

const ownedBy = (restore: SampleDbRestoreObject) => [
  ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbRestore, metadata: restore.metadata }),
];

/**
 * The safety backup: of the data the restore replaced, which the switch left in the previous database. Not owned by
 * the restore: it is the way back, and must outlive the SampleDBRestore object.
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
      annotations: {
        [ANNOTATIONS.restore]: name,
        [ANNOTATIONS.previousDatabase]: restoreDatabases(instance, name).previous,
      },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}

/**
 * The Job that restores `backup` (Completed, with a checksum) into a new database and switches it in: the backup to
 * restore, or (`kind` rollback, only for a failed restore Job of an operator before ADR 0014) its safety backup. No
 * retries: a failure leaves the live data as it was, and a new SampleDBRestore is the way to try again.
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
  const databases = restoreDatabases(instance, restoreName);
  const env = inPlaceRestoreEnv({
    host: instance.podHost,
    port: POSTGRES_PORT,
    database: instance.spec.bootstrap.database,
    owner: instance.spec.bootstrap.owner,
    dump: `${BACKUP_MOUNT_PATH}/${backupDumpPath(instance.name, backupName)}`,
    checksum,
    stagingDatabase: databases.staging,
    previousDatabase: databases.previous,
    terminationLog: TERMINATION_LOG,
  });
  const labels = { ...instance.labels.backup };
  const annotations = { [ANNOTATIONS.restore]: restoreName, [ANNOTATIONS.restoreMethod]: SWITCH_METHOD };
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

/** The Job that drops `databases` (the unfinished copy, or the previous database once it is backed up). */
export function cleanupJob(
  instance: SampleDbInstance,
  restore: SampleDbRestoreObject,
  databases: readonly string[],
): V1Job {
  const restoreName = restore.metadata.name ?? '';
  const live = instance.spec.bootstrap.database;
  if (databases.includes(live)) throw new Error(`refusing to drop the live database ${live}`);
  const env = dropDatabasesEnv({
    host: instance.podHost,
    port: POSTGRES_PORT,
    databases,
    terminationLog: TERMINATION_LOG,
  });
  const labels = { ...instance.labels.backup };
  const annotations = { [ANNOTATIONS.restore]: restoreName };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: cleanupJobName(restoreName),
      namespace: instance.namespace,
      labels,
      annotations,
      ownerReferences: ownedBy(restore),
    },
    spec: {
      backoffLimit: 2,
      template: {
        metadata: { labels, annotations },
        spec: scriptJobPodSpec(
          {
            name: CONTAINERS.restore,
            image: instance.spec.image,
            script: DROP_DATABASES_SCRIPT,
            env: [...literalEnv(env), ...superuserEnv(instance)],
            terminationMessagePath: TERMINATION_LOG,
          },
          [],
        ),
      },
    },
  };
}
