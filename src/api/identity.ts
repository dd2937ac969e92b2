// The identity of the SampleDB API: its group, version and kinds, and every key the operator puts on objects
// (labels, annotations, the finalizer), container names and ports. Imports nothing, so the schemas, the CRDs, the
// controller, the constructs and the Pulumi component all spell them the same way, from here.

export const GROUP = 'sampledb.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** The kinds this API serves, and the plural resource name of each (the CRD's `spec.names`). */
export const KINDS = {
  sampleDb: 'SampleDB',
  sampleDbBackup: 'SampleDBBackup',
  sampleDbRestore: 'SampleDBRestore',
  sampleDbDrill: 'SampleDBDrill',
} as const;
export const PLURALS = {
  sampleDb: 'sampledbs',
  sampleDbBackup: 'sampledbbackups',
  sampleDbRestore: 'sampledbrestores',
  sampleDbDrill: 'sampledbdrills',
} as const;

/** The name the operator goes by: field manager, `managed-by` label value, `part-of` of everything it ships. */
export const OPERATOR_NAME = 'sampledb-operator';
/** `app.kubernetes.io/name` of every child of a SampleDB. */
export const APP_NAME = 'sampledb';

/** Label keys: the app.kubernetes.io recommended ones, and the operator's own under `sampledb.io/`. */
export const LABELS = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  partOf: 'app.kubernetes.io/part-of',
  /** On PVCs (and the credentials Secret) kept by deletion.policy Retain, so they can be found later. */
  orphaned: `${GROUP}/orphaned`,
  /** On final snapshots/backups: which SampleDB (by uid, names can be reused) they protect. */
  finalForUid: `${GROUP}/final-for-uid`,
  /** On scheduled backups: the uid of the SampleDB they were taken for (a re-created same-name one is another). */
  sampleDbUid: `${GROUP}/sampledb-uid`,
  /** On backups the operator created for the schedule, to tell them from on-demand ones (value: `schedule`). */
  trigger: `${GROUP}/trigger`,
  /** On database pods: `primary` (the `-rw` Service selects it) or `replica` (the `-ro` Service); set by the operator. */
  role: `${GROUP}/role`,
  /** On a namespace: `allowed` lets SampleDBDrills run there (anything else, or no label, refuses them). */
  drills: `${GROUP}/drills`,
  /** On a PersistentVolume the operator switched to reclaimPolicy Retain to keep a SampleDB's data (value: `true`). */
  retained: `${GROUP}/retained`,
  /** On an isolate-primary run's enforcement-check pod: what its deny-all egress NetworkPolicy selects. */
  drillNetcheck: `${GROUP}/drill-netcheck`,
} as const;

/**
 * `<name>-<suffix>`: the Secrets the operator writes itself for SampleDB `<name>` (the superuser's password, the
 * monitoring role's, the binding handed to applications, the replication and failover roles'). A user's
 * `bootstrap.credentialsSecret` may not have one of these names (admission refuses it): the operator would overwrite
 * it, or hand the superuser's password out as the owner's.
 */
export const OPERATOR_SECRET_SUFFIXES = [
  'superuser',
  'monitoring',
  'binding',
  'replication',
  'failover',
] as const;

/** The `sampledb.io/drills` value of a namespace where drills may run. */
export const DRILLS_ALLOWED = 'allowed';

export const TRIGGER_SCHEDULE = 'schedule';
/** `sampledb.io/trigger` of the backup taken before a major upgrade. */
export const TRIGGER_UPGRADE = 'upgrade';

/** Annotation keys of the operator. */
export const ANNOTATIONS = {
  /** On the pod template: the hash of postgresql.conf, so a settings change rolls the pod. */
  configHash: `${GROUP}/config-hash`,
  /** On a backup Job and its pods: the SampleDBBackup it runs. */
  backup: `${GROUP}/backup`,
  /** On scheduled SampleDBBackups: the slot (UTC, ISO 8601) they were created for. */
  scheduledAt: `${GROUP}/scheduled-at`,
  /** On final SampleDBBackups: which attempt (1, 2, ...) of the final backup this is. */
  attempt: `${GROUP}/attempt`,
  /** On a SampleDB: the SampleDBRestore that has stopped client writes (its client Service selects no pod). */
  writesStopped: `${GROUP}/writes-stopped`,
  /** On drill Jobs and throw-away SampleDBs: the SampleDBDrill (and run) they belong to. */
  drill: `${GROUP}/drill`,
  /** On restore Jobs and pods: the SampleDBRestore they run. */
  restore: `${GROUP}/restore`,
  /** On in-place restore Jobs: how the Job replaces the data ("switch": ADR 0014; absent on older operators' Jobs). */
  restoreMethod: `${GROUP}/restore-method`,
  /** On a safety SampleDBBackup: the database it backs up (the data a SampleDBRestore replaced), not the live one. */
  previousDatabase: `${GROUP}/previous-database`,
  /** On the StatefulSet: the PostgreSQL major version of the files on its data volume (changed by an upgrade only). */
  dataMajor: `${GROUP}/data-major`,
  /** On the StatefulSet: the major a major upgrade converts its data files to, from stop to Done or rollback. */
  upgradingTo: `${GROUP}/upgrading-to`,
  /** On a version Job: the image whose server it asked. */
  image: `${GROUP}/image`,
  /** On the major upgrade's Jobs and backup: the major and image the upgrade started from. */
  fromMajor: `${GROUP}/from-major`,
  fromImage: `${GROUP}/from-image`,
  /** On a rollback Job: why the upgrade is rolled back. */
  cause: `${GROUP}/cause`,
  /** On a SampleDB: a new value asks for a new attempt of a failed major upgrade (status.upgrade.retryRequest). */
  retryUpgrade: `${GROUP}/retry-upgrade`,
  /** On a SampleDB: hand the primary over to this pod (a clean switchover). */
  switchoverTo: `${GROUP}/switchover-to`,
  /** On database pods: the election term in which the operator labelled it. */
  term: `${GROUP}/term`,
  /** On a data PVC: the PersistentVolume the operator switched to reclaimPolicy Retain before releasing the claim. */
  retainedVolume: `${GROUP}/retained-volume`,
  /** On a retained PersistentVolume: `<namespace>/<SampleDB>` whose data it holds, and why it was retained. */
  retainedFrom: `${GROUP}/retained-from`,
  retainedBecause: `${GROUP}/retained-because`,
  /** On a SampleDB being deleted: why the protection its deletion.policy asks for cannot be taken (a create refused). */
  protectionRefused: `${GROUP}/protection-refused`,
} as const;

/** On every SampleDB, so no child can outlive the deletion policy. */
export const FINALIZER = `${GROUP}/finalizer`;

/**
 * On every data PVC: the claim, and so its volume, stays until the deletion policy is satisfied (snapshot ready, final
 * backup completed) or its PersistentVolume was switched to Retain, whoever deletes it (the namespace, a cascade).
 */
export const DATA_FINALIZER = `${GROUP}/data-protection`;

/** Container names of the database pod and the Jobs. */
export const CONTAINERS = {
  postgres: 'postgres',
  init: 'init',
  backup: 'backup',
  verify: 'verify',
  restore: 'restore',
  drill: 'drill',
} as const;

/** PostgreSQL's port inside the pod, and the name of that port on the container and the Services. */
export const POSTGRES_PORT = 5432;
export const POSTGRES_PORT_NAME = 'postgresql';
