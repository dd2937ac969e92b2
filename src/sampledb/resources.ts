// The API resources the SampleDB controllers read and write, for the runtime's cache and client.
import { GROUP, KINDS, PLURALS, VERSION } from '../api/index.ts';
import type { ResourceType } from '../runtime/index.ts';

export const SAMPLEDBS: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURALS.sampleDb,
  kind: KINDS.sampleDb,
  namespaced: true,
};
export const SAMPLEDB_BACKUPS: ResourceType = {
  ...SAMPLEDBS,
  plural: PLURALS.sampleDbBackup,
  kind: KINDS.sampleDbBackup,
};
export {
  CONFIG_MAPS as CONFIGMAPS,
  JOBS,
  PERSISTENT_VOLUME_CLAIMS as PVCS,
  PODS,
  SECRETS,
  SERVICES,
  STATEFUL_SETS as STATEFULSETS,
  STORAGE_CLASSES,
} from '../runtime/index.ts';
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
