// What a deletion needs to know, read from the cache alone: the plan (plan.ts) decides from this and nothing else.
import { ANNOTATIONS, BACKUP_CONDITIONS, DATA_FINALIZER, LABELS } from '../../api/index.ts';
import { findCondition } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import {
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  STATEFULSETS,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../resources.ts';
import { parseBackupLocation } from '../steps/init-job.ts';
import type { ClusterView } from '../view.ts';
import type { DataVolume, DeletionObservation } from './plan.ts';

const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/** A usable VolumeSnapshotClass: the default one, else the only one; none when the API is not served. */
function snapshotClass(view: ClusterView): string | undefined {
  if (!view.watches(VOLUME_SNAPSHOT_CLASSES)) return undefined;
  const classes = view.list(VOLUME_SNAPSHOT_CLASSES, '');
  const preferred =
    classes.find((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true') ??
    (classes.length === 1 ? classes[0] : undefined);
  return preferred?.metadata.name;
}

/** The data claims of the SampleDB `name` (by label: it may be gone), each with what the plans need to know. */
export function observeDataVolumes(view: ClusterView, namespace: string, name: string): DataVolume[] {
  return view
    .list(PVCS, namespace, { [LABELS.instance]: name, [LABELS.component]: 'database' })
    .map((pvc) => ({
      name: pvc.metadata.name ?? '',
      deleting: Boolean(pvc.metadata.deletionTimestamp),
      orphaned: pvc.metadata.labels?.[LABELS.orphaned] === 'true',
      held: pvc.metadata.finalizers?.includes(DATA_FINALIZER) ?? false,
      ...(pvc.spec?.volumeName ? { volumeName: pvc.spec.volumeName } : {}),
      retained: Boolean(pvc.metadata.annotations?.[ANNOTATIONS.retainedVolume]),
    }));
}

export function observeDeletion(
  instance: SampleDbInstance,
  view: ClusterView,
  now: Date,
): DeletionObservation {
  const { namespace, names, spec } = instance;
  const uid = instance.object.metadata.uid ?? '';
  const dataVolumes = observeDataVolumes(view, namespace, instance.name);
  const snapshots = view.watches(VOLUME_SNAPSHOTS)
    ? view.list(VOLUME_SNAPSHOTS, namespace, { [LABELS.finalForUid]: uid }).map((s) => ({
        name: s.metadata.name ?? '',
        pvcName: s.spec?.source?.persistentVolumeClaimName ?? '',
        readyToUse: s.status?.readyToUse === true,
        ...(s.status?.error?.message ? { error: s.status.error.message } : {}),
      }))
    : [];
  const allBackups = view.list(SAMPLEDB_BACKUPS, namespace);
  // Backups belong to a SampleDB by uid: an earlier SampleDB of this name took the ones labelled with its own.
  const foreign = (b: (typeof allBackups)[number]) => {
    const of = b.metadata.labels?.[LABELS.finalForUid] ?? b.metadata.labels?.[LABELS.sampleDbUid];
    return of !== undefined && of !== uid;
  };
  const backups = allBackups
    .filter((b) => b.metadata.labels?.[LABELS.finalForUid] === uid)
    .map((b) => {
      const failed = findCondition(b.status?.conditions, BACKUP_CONDITIONS.failed);
      return {
        name: b.metadata.name ?? '',
        attempt: Number(b.metadata.annotations?.[ANNOTATIONS.attempt] ?? '1'),
        ...(b.status?.phase ? { phase: b.status.phase } : {}),
        ...(failed?.lastTransitionTime ? { failedAt: failed.lastTransitionTime } : {}),
        ...(failed?.status === 'True' && failed.reason ? { reason: failed.reason } : {}),
        ...(b.status?.message ? { message: b.status.message } : {}),
      };
    });
  const sts = view.get(STATEFULSETS, namespace, names.statefulSet);
  const ownBackupVolume = instance.backupClaim.operatorOwned
    ? view.get(PVCS, namespace, names.backupPvc)
    : undefined;
  const snapshotClassName = snapshotClass(view);
  const { deletionTimestamp, annotations } = instance.object.metadata;
  const refused = annotations?.[ANNOTATIONS.protectionRefused];
  return {
    policy: spec.deletion.policy,
    ...(snapshotClassName ? { snapshotClass: snapshotClassName } : {}),
    dataVolumes,
    snapshots,
    backups,
    statefulSet: !sts ? 'absent' : sts.metadata.deletionTimestamp ? 'deleting' : 'present',
    databasePodExists: view.get(PODS, namespace, names.pod) !== undefined,
    databaseReady: (sts?.status?.readyReplicas ?? 0) >= 1,
    ...(deletionTimestamp ? { deletionStartedAt: deletionTimestamp } : {}),
    ...(refused ? { protectionRefused: refused } : {}),
    ...(ownBackupVolume
      ? {
          backupVolume: {
            name: names.backupPvc,
            deleting: Boolean(ownBackupVolume.metadata.deletionTimestamp),
          },
        }
      : {}),
    backupObjects: allBackups
      .filter((b) => b.spec?.sampleDB?.name === instance.name && !b.metadata.deletionTimestamp && !foreign(b))
      .map((b) => b.metadata.name ?? ''),
    othersOnBackupVolume: allBackups
      .filter((b) => b.spec?.sampleDB?.name === instance.name && foreign(b))
      .filter((b) => parseBackupLocation(b.status?.location)?.claimName === names.backupPvc)
      .map((b) => b.metadata.name ?? ''),
    now,
  };
}
