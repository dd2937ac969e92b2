// Registers the SampleDB and SampleDBBackup controllers on a Manager, with the watches that map every related
// object back to the SampleDB (or SampleDBBackup) it concerns.
import type {
  SampleDbBackupObject,
  SampleDbDrillObject,
  SampleDbObject,
  SampleDbRestoreObject,
} from '../api/index.ts';
import type { KubeObject, Manager, Stored } from '../runtime/index.ts';
import { SampleDbBackupReconciler } from './backup/reconciler.ts';
import { registerDrillMetrics } from './drill/metrics.ts';
import { SampleDbDrillReconciler } from './drill/reconciler.ts';
import { registerSampleDbMetrics } from './metrics.ts';
import { SampleDbReconciler } from './reconciler.ts';
import {
  CONFIGMAPS,
  ENDPOINT_SLICES,
  JOBS,
  NAMESPACES,
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  SAMPLEDB_DRILLS,
  SAMPLEDB_RESTORES,
  SAMPLEDBS,
  SECRETS,
  SERVICES,
  STATEFULSETS,
  STORAGE_CLASSES,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from './resources.ts';
import { SampleDbRestoreReconciler } from './restore/reconciler.ts';
import { ClusterView } from './view.ts';
import {
  backupOfPod,
  byInstanceLabel,
  heldClaimsOfGone,
  MANAGED_SELECTOR,
  referencedObjects,
  SAMPLEDB_BACKUP_STORE,
  SAMPLEDB_STORE,
  watchMaps,
} from './watches.ts';

export interface SampleDbControllerOptions {
  /** Whether the cluster serves snapshot.storage.k8s.io/v1 (checked once at start-up by the caller). */
  snapshots: boolean;
  workers?: number;
  now?: () => Date;
  /** Repository of the PostgreSQL images for SampleDBs without spec.image. Default: docker.io/library/postgres. */
  postgresImageRepository?: string;
  /** How the operator runs, for kill-operator-leader drills (without: no leader election). */
  operator?: { leaderElection: boolean; namespace?: string };
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
  // The field indexes the watch maps read (watches.ts); the stores must be created with them, before the
  // controllers ask for the same informers.
  const sampleDbs = manager.cache.informerFor(SAMPLEDBS, SAMPLEDB_STORE);
  manager.cache.informerFor(SAMPLEDB_BACKUPS, SAMPLEDB_BACKUP_STORE);
  // Secrets and ConfigMaps: only the operator's own are cached whole (a cluster's others are none of its business,
  // and in all-namespaces mode there may be many); the few of the user's that a spec names are watched by name,
  // following the specs (a SampleDB's change updates them before its reconcile reads them).
  manager.cache.informerFor(SECRETS, undefined, { labelSelector: MANAGED_SELECTOR });
  manager.cache.informerFor(CONFIGMAPS, undefined, { labelSelector: MANAGED_SELECTOR });
  // The slices of our routed Services only: the EndpointSlice controller copies a Service's labels onto its slices,
  // and marks those of a headless Service (which routes nothing; its pods resolve even while not ready).
  manager.cache.informerFor(ENDPOINT_SLICES, undefined, {
    labelSelector: `${MANAGED_SELECTOR},!service.kubernetes.io/headless`,
  });
  const followReferences = () => {
    const dbs = sampleDbs.store.list() as Stored<SampleDbObject>[];
    const refs = dbs.map(referencedObjects);
    manager.cache.watchNamed(
      SECRETS,
      refs.flatMap((r) => r.secrets),
    );
    manager.cache.watchNamed(
      CONFIGMAPS,
      refs.flatMap((r) => r.configMaps),
    );
  };
  sampleDbs.onChange(followReferences);
  const maps = watchMaps(view);
  const allSampleDbs = () =>
    (manager.cache.storeFor<Stored<SampleDbObject>>(SAMPLEDBS)?.list() ?? []).map((db) => ({
      namespace: db.metadata.namespace ?? '',
      name: db.metadata.name ?? '',
    }));

  registerSampleDbMetrics(manager.registry, () => ({
    dbs: manager.cache.storeFor<Stored<SampleDbObject>>(SAMPLEDBS)?.list() ?? [],
    backups: manager.cache.storeFor<Stored<SampleDbBackupObject>>(SAMPLEDB_BACKUPS)?.list() ?? [],
  }));

  manager.addController({
    name: 'sampledb',
    for: SAMPLEDBS,
    owns: [STATEFULSETS, JOBS, SERVICES, CONFIGMAPS, SECRETS],
    // Claims still held by our finalizer whose SampleDB is gone: released at start-up too (deletion/gone.ts).
    orphanKeys: () => heldClaimsOfGone(manager.cache.storeFor<Stored<KubeObject>>(PVCS)?.list() ?? [], view),
    watches: [
      { resource: PODS, map: byInstanceLabel },
      { resource: PVCS, map: byInstanceLabel },
      // The client Service starting to route to the pod is what turns the SampleDB Ready (status.ts).
      { resource: ENDPOINT_SLICES, map: byInstanceLabel },
      { resource: SECRETS, map: maps.referencedSecret },
      { resource: CONFIGMAPS, map: maps.referencedConfigMap },
      { resource: SAMPLEDB_BACKUPS, map: maps.backupToSampleDbs },
      // A class becoming expandable concerns every SampleDB whose volume waits for it.
      { resource: STORAGE_CLASSES, map: allSampleDbs },
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

  manager.addController({
    name: 'sampledbbackup',
    for: SAMPLEDB_BACKUPS,
    owns: [JOBS],
    watches: [
      { resource: PODS, map: backupOfPod },
      { resource: SAMPLEDB_BACKUPS, map: maps.backupToQueued },
      { resource: SAMPLEDBS, map: maps.sampleDbToBackups },
      { resource: STATEFULSETS, map: maps.statefulSetToBackups },
      { resource: PVCS, map: maps.pvcToBackups },
    ],
    reconciler: new SampleDbBackupReconciler(deps),
    ...(options.workers ? { workers: options.workers } : {}),
  });

  // An in-place restore waits on its SampleDB (the writes-stopped annotation, readiness), its backups, its Jobs and
  // the client Service: any change to those in its namespace concerns the restores there that are not finished.
  const openRestores = (obj: KubeObject) =>
    (manager.cache.storeFor<Stored<SampleDbRestoreObject>>(SAMPLEDB_RESTORES)?.list() ?? [])
      .filter(
        (r) =>
          r.metadata.namespace === obj.metadata.namespace &&
          !['Completed', 'Failed', 'RolledBack'].includes(r.status?.phase ?? ''),
      )
      .map((r) => ({ namespace: r.metadata.namespace ?? '', name: r.metadata.name ?? '' }));
  manager.addController({
    name: 'sampledbrestore',
    for: SAMPLEDB_RESTORES,
    owns: [JOBS],
    watches: [
      { resource: SAMPLEDBS, map: openRestores },
      { resource: SAMPLEDB_BACKUPS, map: openRestores },
      { resource: SERVICES, map: openRestores },
      { resource: STATEFULSETS, map: openRestores },
      { resource: PODS, map: openRestores },
    ],
    reconciler: new SampleDbRestoreReconciler(deps),
    ...(options.workers ? { workers: options.workers } : {}),
  });

  // A drill waits on its SampleDB, that SampleDB's pods, backups and restores, its namespace's label and its Jobs:
  // any change to those concerns the drills in that namespace (few, and most have no run in progress).
  const drillsIn = (namespace: string | undefined) =>
    (manager.cache.storeFor<Stored<SampleDbDrillObject>>(SAMPLEDB_DRILLS)?.list() ?? [])
      .filter((d) => d.metadata.namespace === namespace)
      .map((d) => ({ namespace: d.metadata.namespace ?? '', name: d.metadata.name ?? '' }));
  const drillsOf = (obj: KubeObject) => drillsIn(obj.metadata.namespace);
  registerDrillMetrics(
    manager.registry,
    () => manager.cache.storeFor<Stored<SampleDbDrillObject>>(SAMPLEDB_DRILLS)?.list() ?? [],
  );
  manager.addController({
    name: 'sampledbdrill',
    for: SAMPLEDB_DRILLS,
    owns: [JOBS],
    watches: [
      { resource: SAMPLEDBS, map: drillsOf },
      { resource: PODS, map: drillsOf },
      { resource: SAMPLEDB_BACKUPS, map: drillsOf },
      { resource: SAMPLEDB_RESTORES, map: drillsOf },
      { resource: NAMESPACES, map: (ns: KubeObject) => drillsIn(ns.metadata.name) },
    ],
    reconciler: new SampleDbDrillReconciler({
      ...deps,
      operator: {
        leaderElection: options.operator?.leaderElection ?? false,
        identity: manager.identity,
        ...(options.operator?.namespace ? { namespace: options.operator.namespace } : {}),
      },
    }),
    ...(options.workers ? { workers: options.workers } : {}),
  });
}
