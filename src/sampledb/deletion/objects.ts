// The objects a deletion creates: the final VolumeSnapshot of each data volume, or the final SampleDBBackup. Pure.
// Both are labelled with the SampleDB's uid (names can be reused) and not owned by it: they must outlive it.
import { ANNOTATIONS, API_VERSION, KINDS, LABELS, type SampleDbBackupObject } from '../../api/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { boundedName } from '../names.ts';
import { SNAPSHOT_GROUP, type VolumeSnapshot } from '../resources.ts';

const uidPrefix = (instance: SampleDbInstance) => (instance.object.metadata.uid ?? '').slice(0, 8);
const finalLabels = (instance: SampleDbInstance) => ({
  ...instance.labels.backup,
  [LABELS.finalForUid]: instance.object.metadata.uid ?? '',
});

export function finalBackupName(instance: SampleDbInstance, attempt: number): string {
  return boundedName(instance.name, `final-${uidPrefix(instance)}-${attempt}`);
}

export function finalSnapshotName(instance: SampleDbInstance, pvcName: string): string {
  return boundedName(pvcName, `final-${uidPrefix(instance)}`);
}

export function finalBackup(instance: SampleDbInstance, attempt: number): SampleDbBackupObject {
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDbBackup,
    metadata: {
      name: finalBackupName(instance, attempt),
      namespace: instance.namespace,
      labels: finalLabels(instance),
      annotations: { [ANNOTATIONS.attempt]: String(attempt) },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}

export function finalSnapshot(
  instance: SampleDbInstance,
  pvcName: string,
  className: string,
): VolumeSnapshot {
  return {
    apiVersion: `${SNAPSHOT_GROUP}/v1`,
    kind: 'VolumeSnapshot',
    metadata: {
      name: finalSnapshotName(instance, pvcName),
      namespace: instance.namespace,
      labels: finalLabels(instance),
    },
    spec: { volumeSnapshotClassName: className, source: { persistentVolumeClaimName: pvcName } },
  };
}
