// Which SampleDB (or SampleDBBackup) an event on another object concerns. Objects a SampleDB references by name
// (its credentials Secret, its initSQL ConfigMap, the backup it restores from) are found through field indexes on
// the SampleDB store, kept up to date by the informer: an event costs one index lookup, not a scan of every SampleDB.
import {
  ANNOTATIONS,
  APP_NAME,
  DATA_FINALIZER,
  LABELS,
  OPERATOR_NAME,
  type SampleDbBackupObject,
  type SampleDbObject,
} from '../api/index.ts';
import type { KubeObject, ObjectRef, Stored, StoreOptions } from '../runtime/index.ts';
import { credentialsSecretOf } from './instance.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS } from './resources.ts';
import type { ClusterView } from './view.ts';

/** Index names; each maps `namespace/name` of the referenced object to the objects that reference it. */
export const INDEXES = {
  credentialsSecret: 'sampledb.io/credentials-secret',
  initSqlConfigMap: 'sampledb.io/init-sql-configmap',
  restoreSource: 'sampledb.io/restore-source',
  /** On the SampleDBBackup store: the SampleDB a backup is of. */
  backupOf: 'sampledb.io/backup-of',
} as const;

const key = (namespace: string | undefined, name: string | undefined): string[] =>
  name ? [`${namespace ?? ''}/${name}`] : [];

type SampleDbs = Stored<SampleDbObject>;
type Backups = Stored<SampleDbBackupObject>;

export const SAMPLEDB_STORE: StoreOptions<SampleDbs> = {
  indexers: {
    [INDEXES.credentialsSecret]: (db) => key(db.metadata.namespace, credentialsSecretOf(db)),
    // The init SQL's ConfigMap and the migrations' (a new or edited key is a reason to reconcile).
    [INDEXES.initSqlConfigMap]: (db) => [
      ...key(db.metadata.namespace, db.spec.bootstrap?.initSQL?.name),
      ...(db.spec.migrations ?? []).flatMap((m) => key(db.metadata.namespace, m.configMap.name)),
    ],
    [INDEXES.restoreSource]: (db) => key(db.metadata.namespace, db.spec.bootstrap?.fromBackup?.name),
  },
};

export const SAMPLEDB_BACKUP_STORE: StoreOptions<Backups> = {
  indexers: { [INDEXES.backupOf]: (b) => key(b.metadata.namespace, b.spec?.sampleDB?.name) },
};

const refOf = (obj: KubeObject): ObjectRef => ({
  namespace: obj.metadata.namespace ?? '',
  name: obj.metadata.name ?? '',
});

/** Selects the Secrets and ConfigMaps the operator caches whole: its own (every child carries this label). */
export const MANAGED_SELECTOR = `${LABELS.managedBy}=${OPERATOR_NAME}`;

/**
 * The user's objects a SampleDB's spec names and the operator reads (not merely mounts into a pod): a supplied
 * credentials Secret, the init SQL and migration ConfigMaps. They lack our label, so each is watched by name.
 */
export function referencedObjects(db: SampleDbObject): { secrets: ObjectRef[]; configMaps: ObjectRef[] } {
  const namespace = db.metadata.namespace ?? '';
  const names = (list: Array<string | undefined>) =>
    [...new Set(list.filter((n): n is string => Boolean(n)))].map((name) => ({ namespace, name }));
  return {
    secrets: names([db.spec.bootstrap?.credentialsSecret?.name]),
    configMaps: names([
      db.spec.bootstrap?.initSQL?.name,
      ...(db.spec.migrations ?? []).map((m) => m.configMap.name),
    ]),
  };
}

/** The SampleDB an object of ours belongs to, by its instance label. */
export function byInstanceLabel(obj: KubeObject): ObjectRef[] {
  const labels = obj.metadata.labels ?? {};
  const instance = labels[LABELS.instance];
  if (!instance || labels[LABELS.name] !== APP_NAME || labels[LABELS.managedBy] !== OPERATOR_NAME) return [];
  return [{ namespace: obj.metadata.namespace ?? '', name: instance }];
}

/** The SampleDBs, gone, whose claims still carry our data-protection finalizer (deletion/gone.ts releases them). */
export function heldClaimsOfGone(claims: readonly KubeObject[], view: ClusterView): ObjectRef[] {
  return claims
    .filter((c) => c.metadata.finalizers?.includes(DATA_FINALIZER))
    .flatMap(byInstanceLabel)
    .filter((ref) => !view.get(SAMPLEDBS, ref.namespace, ref.name));
}

/** The SampleDBBackup a backup Job's pod runs, by its annotation. */
export function backupOfPod(pod: KubeObject): ObjectRef[] {
  const backup = pod.metadata.annotations?.[ANNOTATIONS.backup];
  return backup ? [{ namespace: pod.metadata.namespace ?? '', name: backup }] : [];
}

/** The mapping functions of the SampleDB and SampleDBBackup controllers, reading the indexed stores of `view`. */
export function watchMaps(view: ClusterView) {
  const referencing = (index: string) => (obj: KubeObject) =>
    key(obj.metadata.namespace, obj.metadata.name).flatMap((k) =>
      view.byIndex(SAMPLEDBS, index, k).map(refOf),
    );
  const backupsOf = (namespace: string, dbName: string) =>
    key(namespace, dbName).flatMap((k) => view.byIndex(SAMPLEDB_BACKUPS, INDEXES.backupOf, k).map(refOf));
  return {
    /** The user's own Secret a SampleDB reads credentials from: its creation or edit unblocks that SampleDB. */
    referencedSecret: referencing(INDEXES.credentialsSecret),
    referencedConfigMap: referencing(INDEXES.initSqlConfigMap),
    /** A backup concerns its SampleDB, and any SampleDB restored from it (a Completed source unblocks it). */
    backupToSampleDbs: (obj: KubeObject): ObjectRef[] => {
      // A watch hands over any object; this one is a SampleDBBackup (its DELETED event is no longer in the store).
      const of = (obj as Partial<SampleDbBackupObject>).spec?.sampleDB?.name;
      return [
        ...(of ? [{ namespace: obj.metadata.namespace ?? '', name: of }] : []),
        ...referencing(INDEXES.restoreSource)(obj),
      ];
    },
    /** The other backups of the same SampleDB: one finishing (or going) lets the next in the queue start. */
    backupToQueued: (obj: KubeObject): ObjectRef[] => {
      const of = (obj as Partial<SampleDbBackupObject>).spec?.sampleDB?.name;
      if (!of) return [];
      return backupsOf(obj.metadata.namespace ?? '', of).filter((ref) => ref.name !== obj.metadata.name);
    },
    /** The backups of a SampleDB, whose readiness they wait for. */
    sampleDbToBackups: (db: KubeObject): ObjectRef[] =>
      backupsOf(db.metadata.namespace ?? '', db.metadata.name ?? ''),
    statefulSetToBackups: (sts: KubeObject): ObjectRef[] =>
      byInstanceLabel(sts).flatMap((ref) => backupsOf(ref.namespace, ref.name)),
    /** The backup volume grew (or changed): a backup waiting for room may start. */
    pvcToBackups: (pvc: KubeObject): ObjectRef[] =>
      byInstanceLabel(pvc).flatMap((ref) => backupsOf(ref.namespace, ref.name)),
  };
}
