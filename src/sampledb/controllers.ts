// Registers the SampleDB and SampleDBBackup controllers on a Manager, with the watches that map every related
// object back to the SampleDB (or SampleDBBackup) it concerns.
import {
  ANNOTATIONS,
  APP_NAME,
  LABELS,
  OPERATOR_NAME,
  type SampleDbBackupObject,
  type SampleDbObject,
} from '../api/index.ts';
import type { KubeObject, Manager, ObjectRef } from '../runtime/index.ts';
import { SampleDbBackupReconciler } from './backup/reconciler.ts';
import { credentialsSecretOf } from './instance.ts';
import { registerSampleDbMetrics } from './metrics.ts';
import { SampleDbReconciler } from './reconciler.ts';
import {
  CONFIGMAPS,
  JOBS,
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  SAMPLEDBS,
  SECRETS,
  SERVICES,
  STATEFULSETS,
  STORAGE_CLASSES,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from './resources.ts';
import { ClusterView } from './steps/context.ts';

export interface SampleDbControllerOptions {
  /** Whether the cluster serves snapshot.storage.k8s.io/v1 (checked once at start-up by the caller). */
  snapshots: boolean;
  workers?: number;
  now?: () => Date;
  /** Repository of the PostgreSQL images for SampleDBs without spec.image. Default: docker.io/library/postgres. */
  postgresImageRepository?: string;
}

/** The SampleDB an object of ours belongs to, by its instance label. */
function byInstanceLabel(obj: KubeObject): ObjectRef[] {
  const labels = obj.metadata.labels ?? {};
  const instance = labels[LABELS.instance];
  if (!instance || labels[LABELS.name] !== APP_NAME || labels[LABELS.managedBy] !== OPERATOR_NAME) return [];
  return [{ namespace: obj.metadata.namespace ?? '', name: instance }];
}

export function registerSampleDbControllers(manager: Manager, options: SampleDbControllerOptions): void {
  const view = new ClusterView(manager.cache);
  const deps = {
    client: manager.client,
    view,
    ...(options.now ? { now: options.now } : {}),
    ...(options.postgresImageRepository
      ? { defaults: { imageRepository: options.postgresImageRepository } }
      : {}),
  };
  const sampleDbsIn = (namespace: string) =>
    (manager.cache.storeFor<SampleDbObject & KubeObject>(SAMPLEDBS)?.list() ?? []).filter(
      (db) => db.metadata.namespace === namespace,
    );
  const refs = (dbs: readonly SampleDbObject[]) =>
    dbs.map((db) => ({ namespace: db.metadata.namespace ?? '', name: db.metadata.name ?? '' }));

  // Objects the user owns and a SampleDB references by name: their creation or edit is what a waiting SampleDB
  // needs to hear about.
  const referencedSecret = (obj: KubeObject) =>
    refs(
      sampleDbsIn(obj.metadata.namespace ?? '').filter((db) => credentialsSecretOf(db) === obj.metadata.name),
    );
  const referencedConfigMap = (obj: KubeObject) =>
    refs(
      sampleDbsIn(obj.metadata.namespace ?? '').filter(
        (db) => db.spec.bootstrap?.initSQL?.name === obj.metadata.name,
      ),
    );
  const backupToSampleDb = (obj: KubeObject) => {
    const backup = obj as SampleDbBackupObject;
    return [
      { namespace: obj.metadata.namespace ?? '', name: backup.spec?.sampleDB?.name ?? '' },
      // A restore source becoming Completed unblocks the SampleDB created from it.
      ...refs(
        sampleDbsIn(obj.metadata.namespace ?? '').filter(
          (db) => db.spec.bootstrap?.fromBackup?.name === obj.metadata.name,
        ),
      ),
    ];
  };

  registerSampleDbMetrics(manager.registry, () => ({
    dbs: manager.cache.storeFor<SampleDbObject & KubeObject>(SAMPLEDBS)?.list() ?? [],
    backups: manager.cache.storeFor<SampleDbBackupObject & KubeObject>(SAMPLEDB_BACKUPS)?.list() ?? [],
  }));

  manager.addController({
    name: 'sampledb',
    for: SAMPLEDBS,
    owns: [STATEFULSETS, JOBS, SERVICES, CONFIGMAPS, SECRETS],
    watches: [
      { resource: PODS, map: byInstanceLabel },
      { resource: PVCS, map: byInstanceLabel },
      { resource: SECRETS, map: referencedSecret },
      { resource: CONFIGMAPS, map: referencedConfigMap },
      { resource: SAMPLEDB_BACKUPS, map: backupToSampleDb },
      {
        resource: STORAGE_CLASSES,
        map: () => refs(manager.cache.storeFor<SampleDbObject & KubeObject>(SAMPLEDBS)?.list() ?? []),
      },
      ...(options.snapshots
        ? [
            { resource: VOLUME_SNAPSHOTS, map: byInstanceLabel },
            { resource: VOLUME_SNAPSHOT_CLASSES, map: () => [] },
          ]
        : []),
    ],
    reconciler: new SampleDbReconciler(deps),
    ...(options.workers ? { workers: options.workers } : {}),
  });

  const backupsOf = (namespace: string, dbName: string) =>
    (manager.cache.storeFor<SampleDbBackupObject & KubeObject>(SAMPLEDB_BACKUPS)?.list() ?? [])
      .filter((b) => b.metadata.namespace === namespace && b.spec?.sampleDB?.name === dbName)
      .map((b) => ({ namespace, name: b.metadata.name ?? '' }));

  manager.addController({
    name: 'sampledbbackup',
    for: SAMPLEDB_BACKUPS,
    owns: [JOBS],
    watches: [
      {
        resource: PODS,
        map: (pod) => {
          const backup = pod.metadata.annotations?.[ANNOTATIONS.backup];
          return backup ? [{ namespace: pod.metadata.namespace ?? '', name: backup }] : [];
        },
      },
      { resource: SAMPLEDBS, map: (db) => backupsOf(db.metadata.namespace ?? '', db.metadata.name ?? '') },
      {
        resource: STATEFULSETS,
        map: (sts) => byInstanceLabel(sts).flatMap((ref) => backupsOf(ref.namespace, ref.name)),
      },
    ],
    reconciler: new SampleDbBackupReconciler(deps),
    ...(options.workers ? { workers: options.workers } : {}),
  });
}
