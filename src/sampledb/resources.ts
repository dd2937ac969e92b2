// The API resources the SampleDB controllers read and write, for the runtime's cache and client, each typed by the
// objects it holds.

import type { V1NetworkPolicy } from '@kubernetes/client-node';
import {
  GROUP,
  KINDS,
  PLURALS,
  type SampleDbBackupObject,
  type SampleDbDrillObject,
  type SampleDbObject,
  type SampleDbRestoreObject,
  VERSION,
} from '../api/index.ts';
import { type KubeObject, type ResourceType, resourceType } from '../runtime/index.ts';

export const SAMPLEDBS = resourceType<SampleDbObject>(GROUP, VERSION, PLURALS.sampleDb, KINDS.sampleDb);
export const SAMPLEDB_BACKUPS = resourceType<SampleDbBackupObject>(
  GROUP,
  VERSION,
  PLURALS.sampleDbBackup,
  KINDS.sampleDbBackup,
);
export const SAMPLEDB_RESTORES = resourceType<SampleDbRestoreObject>(
  GROUP,
  VERSION,
  PLURALS.sampleDbRestore,
  KINDS.sampleDbRestore,
);
export const SAMPLEDB_DRILLS = resourceType<SampleDbDrillObject>(
  GROUP,
  VERSION,
  PLURALS.sampleDbDrill,
  KINDS.sampleDbDrill,
);
export {
  CONFIG_MAPS as CONFIGMAPS,
  ENDPOINT_SLICES,
  JOBS,
  NAMESPACES,
  PERSISTENT_VOLUME_CLAIMS as PVCS,
  PERSISTENT_VOLUMES,
  PODS,
  SECRETS,
  SERVICES,
  STATEFUL_SETS as STATEFULSETS,
  STORAGE_CLASSES,
} from '../runtime/index.ts';

/** networking.k8s.io/v1 NetworkPolicy: isolate-primary creates and deletes them (never read back: no cache). */
export const NETWORK_POLICIES = resourceType<V1NetworkPolicy>(
  'networking.k8s.io',
  'v1',
  'networkpolicies',
  'NetworkPolicy',
);

/** snapshot.storage.k8s.io/v1 VolumeSnapshot: the fields the deletion reads and writes. */
export interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: { readyToUse?: boolean; error?: { message?: string } };
}

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS: ResourceType<VolumeSnapshot> = resourceType(
  SNAPSHOT_GROUP,
  'v1',
  'volumesnapshots',
  'VolumeSnapshot',
);
export const VOLUME_SNAPSHOT_CLASSES: ResourceType<KubeObject> = resourceType(
  SNAPSHOT_GROUP,
  'v1',
  'volumesnapshotclasses',
  'VolumeSnapshotClass',
  false,
);
