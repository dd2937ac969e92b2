// Everything the controller is allowed to do, in one table: the constructs turn it into RBAC, tests check that it has
// no wildcard, and the controller's integration tests run under exactly these rules. When the controller starts
// using a new verb, it is added here and nowhere else. test/e2e/zz-privileges.test.ts holds the table to the apiserver's
// audit log: every verb here was used by the e2e run, or test/support/least-privilege.ts says why not.
import { GROUP, OPERATOR_NAME, PLURALS } from './identity.ts';

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Restricts the rule to these object names (create cannot be restricted this way). */
  readonly resourceNames?: readonly string[];
  /** Why the controller needs it (rendered as a comment in docs, kept here for review). */
  readonly why: string;
}

const READ = ['get', 'list', 'watch'] as const;

/** Rules on namespaced resources in the namespaces the operator watches. */
export const WATCHED_NAMESPACE_RULES: readonly PolicyRule[] = [
  {
    apiGroups: [GROUP],
    resources: [PLURALS.sampleDb],
    verbs: [...READ, 'create', 'patch', 'delete'],
    why: 'the primary resource; patch adds and removes the finalizer; a restore-check drill creates and deletes its throw-away SampleDB',
  },
  {
    apiGroups: [GROUP],
    resources: [
      `${PLURALS.sampleDb}/status`,
      `${PLURALS.sampleDbBackup}/status`,
      `${PLURALS.sampleDbRestore}/status`,
      `${PLURALS.sampleDbDrill}/status`,
    ],
    verbs: ['patch'],
    why: 'status is written with server-side apply on the status subresource',
  },
  {
    apiGroups: [GROUP],
    resources: [`${PLURALS.sampleDb}/finalizers`],
    verbs: ['update'],
    why: 'children set blockOwnerDeletion on their SampleDB owner reference',
  },
  {
    apiGroups: [GROUP],
    resources: [PLURALS.sampleDbBackup],
    verbs: [...READ, 'create', 'delete'],
    why: 'scheduled and final backups are created; deletion.policy Delete removes the SampleDB backups',
  },
  {
    apiGroups: [GROUP],
    resources: [PLURALS.sampleDbRestore],
    verbs: [...READ],
    why: 'in-place restores are run (their safety backup is a SampleDBBackup, their Jobs are Jobs)',
  },
  {
    apiGroups: [GROUP],
    resources: [PLURALS.sampleDbDrill],
    verbs: [...READ],
    why: 'drills are run (their faults are pod deletions, their probes Jobs)',
  },
  {
    apiGroups: [''],
    resources: ['services', 'configmaps', 'secrets'],
    verbs: [...READ, 'create', 'patch'],
    why: 'children applied with server-side apply (a patch that creates needs create too); owner references delete them',
  },
  {
    apiGroups: [''],
    resources: ['persistentvolumeclaims'],
    verbs: [...READ, 'create', 'patch', 'delete'],
    why: 'data and backup volumes: grown by patch, deleted as the deletion policy says',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: [...READ, 'patch', 'delete'],
    why: 'readiness and Job termination messages; with replicas, the role label and fencing a primary (ADR 0008); kill-primary and kill-replica drills',
  },
  {
    apiGroups: ['apps'],
    resources: ['statefulsets'],
    verbs: [...READ, 'create', 'patch', 'delete'],
    why: 'the database workload; deleted before its volumes on deletion',
  },
  {
    apiGroups: ['batch'],
    resources: ['jobs'],
    verbs: [...READ, 'create', 'patch'],
    why: 'init, backup and restore Jobs (owner references delete them)',
  },
  {
    apiGroups: ['discovery.k8s.io'],
    resources: ['endpointslices'],
    // Only the informer's list and watch (of slices carrying our label): never a get.
    verbs: ['list', 'watch'],
    why: 'a SampleDB is Ready only once its client Service routes to the database pod',
  },
  {
    apiGroups: ['networking.k8s.io'],
    resources: ['networkpolicies'],
    // No read: the drill records in its status what it created, and deletes by name (a 404 is a deletion done).
    verbs: ['create', 'delete'],
    why: 'an isolate-primary drill: the deny-all policies of its enforcement check and of the isolation itself',
  },
  {
    apiGroups: ['snapshot.storage.k8s.io'],
    resources: ['volumesnapshots'],
    verbs: [...READ, 'create'],
    why: 'the snapshot taken before a SampleDB with deletion.policy Snapshot is deleted (kept: it is the data)',
  },
  {
    apiGroups: ['events.k8s.io'],
    resources: ['events'],
    verbs: ['create', 'patch'],
    why: 'Events on SampleDBs (patch to bump the series count of a repeated event)',
  },
];

/** Cluster-scoped rules, needed even when the operator watches only some namespaces. */
export const CLUSTER_RULES: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['persistentvolumes'],
    // Only patch (by name, from the claim's spec.volumeName): no list, watch or get of the cluster's volumes.
    verbs: ['patch'],
    why: 'when a deletion policy cannot be satisfied, the data volume is switched to reclaimPolicy Retain',
  },
  {
    apiGroups: ['storage.k8s.io'],
    resources: ['storageclasses'],
    verbs: [...READ],
    why: 'whether a StorageClass allows volume expansion before PVCs are grown',
  },
  {
    apiGroups: ['snapshot.storage.k8s.io'],
    resources: ['volumesnapshotclasses'],
    verbs: [...READ],
    why: 'whether a VolumeSnapshotClass exists for the deletion snapshot',
  },
  {
    apiGroups: [''],
    resources: ['namespaces'],
    verbs: [...READ],
    why: 'a drill runs only in a namespace labelled sampledb.io/drills=allowed (its labels are all that is read)',
  },
];

/** Name of the leader-election Lease in the operator's namespace. */
export const LEADER_ELECTION_LEASE = OPERATOR_NAME;

/** Rules in the operator's own namespace only. */
export const OPERATOR_NAMESPACE_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['create'],
    why: 'leader election: the first replica creates the Lease',
  },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    resourceNames: [LEADER_ELECTION_LEASE],
    // list and watch: the elector watches its Lease (fieldSelector metadata.name, which the apiserver authorizes
    // as that resource name) to take over at once on a release. Without them every watch attempt got a 403.
    verbs: ['get', 'list', 'update', 'watch'],
    why: 'leader election: watch, renew, take over and release only our own Lease',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['delete'],
    why: 'a kill-operator-leader drill: the leader deletes its own pod (its name is only known at run time)',
  },
];
