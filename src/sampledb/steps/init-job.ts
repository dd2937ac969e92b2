// The init Job: created once the database server is starting (`serverStarting`), never re-applied (a Job's pod
// template is immutable, and a finished Job is the record that initialization happened). With
// bootstrap.fromBackup it restores that backup.
import type { V1Pod } from '@kubernetes/client-node';
import { CONTAINERS, REASONS, SAMPLEDB_CONDITIONS, type SampleDbBackupObject } from '../../api/index.ts';
import { initJob, type RestoreSource } from '../init-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS } from '../resources.ts';
import type { Observation, Step } from './context.ts';

/** "pvc://<claim>/<path>" → claim and path, or undefined when it is not a location on a backup volume. */
export function parseBackupLocation(
  location: string | undefined,
): { claimName: string; path: string } | undefined {
  const match = /^pvc:\/\/([^/]+)\/(.+)$/.exec(location ?? '');
  return match ? { claimName: match[1] as string, path: match[2] as string } : undefined;
}

export type RestoreResolution =
  | { ok: true; source: RestoreSource }
  | { ok: false; reason: string; message: string };

/** Pure: the RestoreSource of bootstrap.fromBackup from the SampleDBBackup as found (or not). */
export function resolveRestoreSource(
  name: string,
  backup: SampleDbBackupObject | undefined,
): RestoreResolution {
  if (!backup) {
    return {
      ok: false,
      reason: REASONS.backupNotFound,
      message: `SampleDBBackup ${name} (bootstrap.fromBackup) was not found in this namespace: create it or fix the name.`,
    };
  }
  const status = backup.status;
  if (status?.phase !== 'Completed') {
    return {
      ok: false,
      reason: status?.phase === 'Failed' ? REASONS.backupFailed : 'BackupNotCompleted',
      message: `SampleDBBackup ${name} (bootstrap.fromBackup) is ${status?.phase ?? 'Pending'}: the database is restored once it has Completed.`,
    };
  }
  const location = parseBackupLocation(status.location);
  if (!location) {
    return {
      ok: false,
      reason: REASONS.backupLocationInvalid,
      message: `SampleDBBackup ${name} has no usable status.location ("${status.location ?? ''}").`,
    };
  }
  return { ok: true, source: { ...location, ...(status.checksum ? { checksum: status.checksum } : {}) } };
}

/**
 * The database server is starting or up: a ready replica, or the primary pod's postgres container running. The Job
 * is created from then on rather than once the pod is Ready, so its pod starts while initdb runs (its script waits
 * for the server to accept connections): the owner can log in about as soon as the server listens, instead of a
 * readiness probe and a Job pod start later. Not before the container runs: a pod that is not scheduled yet must not
 * use up the Job's wait and retries.
 */
export function serverStarting(
  statefulSet: Observation['statefulSet'],
  primaryPod: V1Pod | undefined,
): boolean {
  if ((statefulSet?.status?.readyReplicas ?? 0) >= 1) return true;
  const postgres = primaryPod?.status?.containerStatuses?.find((c) => c.name === CONTAINERS.postgres);
  return Boolean(postgres?.state?.running) && !primaryPod?.metadata?.deletionTimestamp;
}

function initPrerequisites(
  instance: SampleDbInstance,
  observed: Readonly<Observation>,
  primaryPod: V1Pod | undefined,
): boolean {
  if (!serverStarting(observed.statefulSet, primaryPod)) return false;
  if (!observed.credentialsSecret) return false;
  const initSql = instance.spec.bootstrap.initSQL;
  if (initSql && observed.initSqlConfigMap?.data?.[initSql.key] === undefined) return false;
  return true;
}

export const ensureInitJob: Step = {
  name: 'init-job',
  writes: ['apply'],
  async run({ instance, observed, view, write }) {
    const { namespace, names } = instance;
    const existing = view.get(JOBS, namespace, names.initJob);
    if (existing)
      return { observed: { initJob: existing, initJobPods: view.ownedBy(PODS, existing.metadata.uid) } };
    if (!initPrerequisites(instance, observed, view.get(PODS, namespace, instance.primary.pod)))
      return undefined;
    let restore: RestoreSource | undefined;
    const fromBackup = instance.spec.bootstrap.fromBackup?.name;
    if (fromBackup) {
      const resolved = resolveRestoreSource(fromBackup, view.get(SAMPLEDB_BACKUPS, namespace, fromBackup));
      if (!resolved.ok) {
        const { reason, message } = resolved;
        return { overrides: [{ type: SAMPLEDB_CONDITIONS.initialized, status: 'False', reason, message }] };
      }
      restore = resolved.source;
    }
    return { observed: { initJob: await write.apply(JOBS, initJob(instance, restore)) } };
  },
};
