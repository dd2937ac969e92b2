// The API resources the SampleDB controllers read and write, for the runtime's cache and client.
import type { ResourceType } from '../runtime/index.ts';

const core = (plural: string, kind: string): ResourceType => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced: true,
});

export const SAMPLEDBS: ResourceType = {
  group: 'sampledb.io',
  version: 'v1alpha1',
  plural: 'sampledbs',
  kind: 'SampleDB',
  namespaced: true,
};
export const SAMPLEDB_BACKUPS: ResourceType = {
  ...SAMPLEDBS,
  plural: 'sampledbbackups',
  kind: 'SampleDBBackup',
};
export const SECRETS = core('secrets', 'Secret');
export const CONFIGMAPS = core('configmaps', 'ConfigMap');
export const SERVICES = core('services', 'Service');
export const PVCS = core('persistentvolumeclaims', 'PersistentVolumeClaim');
export const PODS = core('pods', 'Pod');
export const STATEFULSETS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'statefulsets',
  kind: 'StatefulSet',
  namespaced: true,
};
export const JOBS: ResourceType = {
  group: 'batch',
  version: 'v1',
  plural: 'jobs',
  kind: 'Job',
  namespaced: true,
};
export const STORAGE_CLASSES: ResourceType = {
  group: 'storage.k8s.io',
  version: 'v1',
  plural: 'storageclasses',
  kind: 'StorageClass',
  namespaced: false,
};
export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS: ResourceType = {
  group: SNAPSHOT_GROUP,
  version: 'v1',
  plural: 'volumesnapshots',
  kind: 'VolumeSnapshot',
  namespaced: true,
};
export const VOLUME_SNAPSHOT_CLASSES: ResourceType = {
  group: SNAPSHOT_GROUP,
  version: 'v1',
  plural: 'volumesnapshotclasses',
  kind: 'VolumeSnapshotClass',
  namespaced: false,
};
