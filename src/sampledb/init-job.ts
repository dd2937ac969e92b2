// The init Job: runs scripts/init.ts against the database pod, with the same image (so psql matches the server).
import type { V1Job, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { CONTAINERS, POSTGRES_PORT } from '../api/index.ts';
import { PASSWORD_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { literalEnv, scriptJobPodSpec, secretEnv, superuserEnv } from './pod.ts';
import { BACKUP_MOUNT_PATH } from './scripts/backup.ts';
import { INIT_SCRIPT, INIT_SQL_FILE_NAME, INIT_SQL_MOUNT_PATH, initScriptEnv } from './scripts/init.ts';

/** A few retries for transient trouble; a broken bootstrap SQL fails the same way every time. */
export const INIT_BACKOFF_LIMIT = 3;
/** Bounds a Job that can never succeed (e.g. a pod that never gets scheduled), so status can say so. */
export const INIT_ACTIVE_DEADLINE_SECONDS = 3600;

/** A dump to restore (bootstrap.fromBackup), resolved by the caller from the SampleDBBackup's status. */
export interface RestoreSource {
  claimName: string;
  /** Path of the dump relative to the root of the backup volume. */
  path: string;
  /** "sha256:<hex>" from the SampleDBBackup status. */
  checksum?: string;
}

export function initJob(instance: SampleDbInstance, restore?: RestoreSource): V1Job {
  const { spec, names } = instance;
  const initSql = spec.bootstrap.initSQL;
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  if (initSql) {
    volumes.push({
      name: 'init-sql',
      configMap: { name: initSql.name, items: [{ key: initSql.key, path: INIT_SQL_FILE_NAME }] },
    });
    mounts.push({ name: 'init-sql', mountPath: INIT_SQL_MOUNT_PATH, readOnly: true });
  }
  if (restore) {
    volumes.push({
      name: 'backups',
      persistentVolumeClaim: { claimName: restore.claimName, readOnly: true },
    });
    mounts.push({ name: 'backups', mountPath: BACKUP_MOUNT_PATH, readOnly: true });
  }
  const env = initScriptEnv({
    host: instance.podHost,
    port: POSTGRES_PORT,
    database: spec.bootstrap.database,
    owner: spec.bootstrap.owner,
    ...(initSql ? { initSqlFile: `${INIT_SQL_MOUNT_PATH}/${INIT_SQL_FILE_NAME}` } : {}),
    ...(restore
      ? {
          restoreDump: `${BACKUP_MOUNT_PATH}/${restore.path}`,
          ...(restore.checksum ? { restoreChecksum: restore.checksum } : {}),
        }
      : {}),
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, names.initJob, 'init'),
    spec: {
      backoffLimit: INIT_BACKOFF_LIMIT,
      activeDeadlineSeconds: INIT_ACTIVE_DEADLINE_SECONDS,
      // No ttlSecondsAfterFinished: the status reads the finished Job to decide Initialized.
      template: {
        metadata: { labels: { ...instance.labels.init } },
        spec: scriptJobPodSpec(
          {
            name: CONTAINERS.init,
            image: spec.image,
            script: INIT_SCRIPT,
            env: [
              ...literalEnv(env),
              ...superuserEnv(instance),
              secretEnv('SAMPLEDB_OWNER_PASSWORD', instance.credentials.secretName, PASSWORD_KEY),
            ],
            volumeMounts: mounts,
          },
          volumes,
        ),
      },
    },
  };
}
