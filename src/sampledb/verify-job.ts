// Verified backups: the Job that restores one completed SampleDBBackup into a temporary server inside its own pod and
// checks it (scripts/verify.ts), and the ConfigMap volume of the user's verification query that the backup Job
// mounts too.
import type { V1Job, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { ANNOTATIONS, API_VERSION, CONTAINERS, KINDS, type SampleDbBackupObject } from '../api/index.ts';
import { TERMINATION_LOG } from './backup-job.ts';
import type { SampleDbInstance } from './instance.ts';
import { ownerReferenceTo } from './meta.ts';
import { backupDumpPath, verifyJobName } from './names.ts';
import { literalEnv, scriptJobPodSpec } from './pod.ts';
import { BACKUP_MOUNT_PATH } from './scripts/backup.ts';
import { VERIFY_SCRIPT, verifyScriptEnv } from './scripts/verify.ts';

/** A failed verification is a finding, not a flake: one retry for a lost node, no more. */
export const VERIFY_BACKOFF_LIMIT = 1;
export const VERIFY_DATA_PATH = '/var/lib/sampledb-verify';
const VERIFY_QUERY_DIR = '/etc/sampledb-verify';
const VERIFY_QUERY_FILE = 'verify.sql';

/** Whether backups of this SampleDB are verified. */
export function verifiesBackups(instance: SampleDbInstance): boolean {
  return instance.object.spec.backup?.verify === true;
}

/** The volume and mount of the user's verification query, and the file the scripts read; none without one. */
export function verifyQueryMount(
  instance: SampleDbInstance,
): { volume: V1Volume; mount: V1VolumeMount; file: string } | undefined {
  const query = instance.object.spec.backup?.verifyQuery;
  if (!query || !verifiesBackups(instance)) return undefined;
  return {
    // Optional: a missing ConfigMap must not leave the pod waiting forever; the script says it is missing.
    volume: {
      name: 'verify-query',
      configMap: { name: query.name, items: [{ key: query.key, path: VERIFY_QUERY_FILE }], optional: true },
    },
    mount: { name: 'verify-query', mountPath: VERIFY_QUERY_DIR, readOnly: true },
    file: `${VERIFY_QUERY_DIR}/${VERIFY_QUERY_FILE}`,
  };
}

/**
 * The Job that verifies a Completed backup. It needs no credentials and no network: the dump from the backup
 * volume (read-only), a server of its own on an emptyDir as large as the database's volume.
 */
export function verifyJob(instance: SampleDbInstance, backup: SampleDbBackupObject): V1Job {
  const backupName = backup.metadata.name;
  if (!backupName) throw new Error('SampleDBBackup has no metadata.name');
  const checksum = backup.status?.checksum;
  if (!checksum) throw new Error(`SampleDBBackup ${backupName} has no checksum to verify against`);
  const query = verifyQueryMount(instance);
  const env = verifyScriptEnv({
    dump: `${BACKUP_MOUNT_PATH}/${backupDumpPath(instance.name, backupName)}`,
    checksum,
    dataDirectory: VERIFY_DATA_PATH,
    terminationLog: TERMINATION_LOG,
    ...(query ? { queryFile: query.file } : {}),
  });
  const labels = { ...instance.labels.backup };
  const annotations = { [ANNOTATIONS.backup]: backupName };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: verifyJobName(backupName),
      namespace: instance.namespace,
      labels,
      annotations,
      ownerReferences: [
        ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbBackup, metadata: backup.metadata }),
      ],
    },
    spec: {
      backoffLimit: VERIFY_BACKOFF_LIMIT,
      template: {
        metadata: { labels, annotations },
        spec: scriptJobPodSpec(
          {
            name: CONTAINERS.verify,
            image: instance.spec.image,
            script: VERIFY_SCRIPT,
            env: literalEnv(env),
            terminationMessagePath: TERMINATION_LOG,
            volumeMounts: [
              { name: 'backups', mountPath: BACKUP_MOUNT_PATH, readOnly: true },
              { name: 'verify-data', mountPath: VERIFY_DATA_PATH },
              ...(query ? [query.mount] : []),
            ],
          },
          [
            {
              name: 'backups',
              persistentVolumeClaim: { claimName: instance.backupClaim.name, readOnly: true },
            },
            { name: 'verify-data', emptyDir: { sizeLimit: instance.spec.storage.size } },
            ...(query ? [query.volume] : []),
          ],
        ),
      },
    },
  };
}
