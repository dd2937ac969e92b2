// Logical backups: the backup PVC and the Job that runs scripts/backup.ts for one SampleDBBackup.
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  CONTAINERS,
  KINDS,
  POSTGRES_PORT,
  parseQuantity,
  type SampleDbBackupObject,
} from '../api/index.ts';
import type { SampleDbInstance } from './instance.ts';
import { ownerReferenceTo } from './meta.ts';
import { backupDumpPath, backupJobName, isRestorePreviousDatabase } from './names.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv } from './pod.ts';
import { BACKUP_MOUNT_PATH, BACKUP_SCRIPT, backupScriptEnv } from './scripts/backup.ts';
import { verifyQueryMount } from './verify-job.ts';

export const BACKUP_BACKOFF_LIMIT = 2;
export const TERMINATION_LOG = '/dev/termination-log';

/** Twice a quantity, keeping its unit when it is a whole number ("10Gi" → "20Gi"), else in bytes. */
export function doubleQuantity(quantity: string): string {
  const match = /^(\d+)([KMGTPE]i|[kMGTPE])?$/.exec(quantity);
  if (match) return `${Number(match[1]) * 2}${match[2] ?? ''}`;
  const value = parseQuantity(quantity);
  if (value === undefined) throw new Error(`not a quantity: ${quantity}`);
  return String(Math.ceil(value * 2));
}

/**
 * The backup PVC the operator creates, or `undefined` when the user gives `backup.volume.claimName`.
 *
 * Deliberately NOT owned by the SampleDB: the final backup taken when a SampleDB is deleted lives here, and an
 * owner reference would let the garbage collector delete it together with the SampleDB. The deletion policy
 * `Delete` removes it explicitly.
 */
export function backupPvc(instance: SampleDbInstance): V1PersistentVolumeClaim | undefined {
  if (!instance.backupClaim.operatorOwned) return undefined;
  const volume = instance.object.spec.backup?.volume;
  const storageClassName = volume?.storageClassName;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: instance.names.backupPvc,
      namespace: instance.namespace,
      labels: { ...instance.labels.backup },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: volume?.size ?? doubleQuantity(instance.spec.storage.size) } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}

/** `status.location` of a backup: "pvc://<claim>/<sampledb>/<backup>.dump". */
export function backupLocation(instance: SampleDbInstance, backupName: string): string {
  return `pvc://${instance.backupClaim.name}/${backupDumpPath(instance.name, backupName)}`;
}

/**
 * The database a backup dumps: the SampleDB's, or for a restore's safety backup the previous database its switch
 * left (ADR 0014). Only a name a restore of this SampleDB's database gives is honoured, so the annotation cannot
 * point a backup at another database of the server.
 */
export function backupDatabase(instance: SampleDbInstance, backup: SampleDbBackupObject): string {
  const live = instance.spec.bootstrap.database;
  const previous = backup.metadata.annotations?.[ANNOTATIONS.previousDatabase];
  return previous && isRestorePreviousDatabase(live, previous) ? previous : live;
}

/**
 * The Job that takes one backup. Owned by the SampleDBBackup (deleting the backup object cleans up its Job); the
 * result is the container's termination message, parsed by `parseBackupResult`.
 */
export function backupJob(instance: SampleDbInstance, backup: SampleDbBackupObject): V1Job {
  const { spec } = instance;
  const backupName = backup.metadata.name;
  if (!backupName) throw new Error('SampleDBBackup has no metadata.name');
  // The user's verification query runs in the dump's snapshot, so the verification has its output to compare with.
  const query = verifyQueryMount(instance);
  const env = backupScriptEnv({
    host: instance.podHost,
    port: POSTGRES_PORT,
    database: backupDatabase(instance, backup),
    directory: `${BACKUP_MOUNT_PATH}/${instance.name}`,
    backupName,
    terminationLog: TERMINATION_LOG,
    ...(query ? { verifyQueryFile: query.file } : {}),
  });
  const labels = { ...instance.labels.backup };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: backupJobName(backupName),
      namespace: instance.namespace,
      labels,
      annotations: { [ANNOTATIONS.backup]: backupName },
      ownerReferences: [
        ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbBackup, metadata: backup.metadata }),
      ],
    },
    spec: {
      backoffLimit: BACKUP_BACKOFF_LIMIT,
      template: {
        metadata: { labels, annotations: { [ANNOTATIONS.backup]: backupName } },
        spec: scriptJobPodSpec(
          {
            name: CONTAINERS.backup,
            image: spec.image,
            script: BACKUP_SCRIPT,
            env: [...literalEnv(env), ...superuserEnv(instance)],
            terminationMessagePath: TERMINATION_LOG,
            volumeMounts: [
              { name: 'backups', mountPath: BACKUP_MOUNT_PATH },
              ...(query ? [query.mount] : []),
            ],
          },
          [
            { name: 'backups', persistentVolumeClaim: { claimName: instance.backupClaim.name } },
            ...(query ? [query.volume] : []),
          ],
        ),
      },
    },
  };
}
