// The deletion planner when the policy's protection cannot be had, and the claims planner outside a deletion: tables
// of observations (what the cache would show) and the one action each must lead to. Pure; no API at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, isNamespaceTerminating, type KubeObject } from '../../../../src/runtime/index.ts';
import { planClaims } from '../../../../src/sampledb/deletion/claims.ts';
import {
  type DataVolume,
  type DeletionAction,
  type DeletionObservation,
  planDeletion,
} from '../../../../src/sampledb/deletion/plan.ts';
import { deletionCondition } from '../../../../src/sampledb/deletion/report.ts';
import { FINAL_BACKUP_READY_BOUND_MS } from '../../../../src/sampledb/deletion/retain.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import type { ClusterView } from '../../../../src/sampledb/view.ts';
import { heldClaimsOfGone } from '../../../../src/sampledb/watches.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const now = new Date('2026-01-01T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();

const volume = (overrides: Partial<DataVolume> = {}): DataVolume => ({
  name: 'data-orders-0',
  deleting: false,
  orphaned: false,
  held: true,
  volumeName: 'pv-1',
  retained: false,
  ...overrides,
});

function observation(overrides: Partial<DeletionObservation> = {}): DeletionObservation {
  return {
    policy: 'Snapshot',
    dataVolumes: [volume()],
    snapshots: [],
    backups: [],
    statefulSet: 'present',
    databasePodExists: true,
    databaseReady: true,
    deletionStartedAt: ago(10_000),
    backupObjects: [],
    now,
    ...overrides,
  };
}

const retain = (cause: string, volumes = [{ pvc: 'data-orders-0', pv: 'pv-1' }]) => ({
  kind: 'retain-volumes',
  volumes,
  cause,
});
/** The action, with a retain decision reduced to its cause (the message is for people). */
function next(obs: DeletionObservation): unknown {
  const action: DeletionAction = planDeletion(obs).next;
  if (action.kind !== 'retain-volumes') return action;
  return { kind: action.kind, volumes: action.volumes, cause: action.decision.cause };
}

describe('planDeletion: the data is held, then protected or kept on a Retain volume', () => {
  const cases: { name: string; obs: Partial<DeletionObservation>; expect: unknown }[] = [
    {
      name: 'a claim without our finalizer is held before anything else',
      obs: { dataVolumes: [volume({ held: false })] },
      expect: { kind: 'hold-data-volumes', names: ['data-orders-0'] },
    },
    {
      name: 'under Delete nothing is held (it is going anyway)',
      obs: { policy: 'Delete', dataVolumes: [volume({ held: false })] },
      expect: { kind: 'delete-statefulset' },
    },
    {
      name: 'a Ready database: the final backup as before',
      obs: {},
      expect: { kind: 'create-backup', attempt: 1 },
    },
    {
      name: 'the namespace refused the backup: retain the volume',
      obs: {
        protectionRefused: 'NamespaceTerminating',
        statefulSet: 'deleting',
        dataVolumes: [volume({ deleting: true })],
      },
      expect: retain('NamespaceTerminating'),
    },
    {
      name: 'the namespace refused the snapshot: retain the volume',
      obs: { snapshotClass: 'csi', protectionRefused: 'NamespaceTerminating' },
      expect: retain('NamespaceTerminating'),
    },
    {
      name: 'a completed final backup protects even if a later create was refused',
      obs: {
        protectionRefused: 'NamespaceTerminating',
        backups: [{ name: 'b1', attempt: 1, phase: 'Completed' }],
      },
      expect: { kind: 'delete-statefulset' },
    },
    {
      name: 'Terminating claim (the old "protected" skip): it cannot be snapshotted, so it is retained',
      obs: { snapshotClass: 'csi', dataVolumes: [volume({ deleting: true })] },
      expect: retain('ClaimDeleting'),
    },
    {
      name: 'Terminating claim with a Ready database: the backup is still taken (the pod keeps the claim)',
      obs: { dataVolumes: [volume({ deleting: true })] },
      expect: { kind: 'create-backup', attempt: 1 },
    },
    {
      name: 'the StatefulSet was deleted (a foreground cascade) before the backup completed',
      obs: { statefulSet: 'deleting', databaseReady: false, backups: [{ name: 'b1', attempt: 1 }] },
      expect: retain('WorkloadGone'),
    },
    {
      name: 'the StatefulSet is gone but the backup completed: the backup protects, nothing retained',
      obs: {
        statefulSet: 'absent',
        databasePodExists: false,
        databaseReady: false,
        backups: [{ name: 'b1', attempt: 1, phase: 'Completed' }],
      },
      expect: { kind: 'delete-data-volumes', names: ['data-orders-0'] },
    },
    {
      name: 'database not Ready within the bound: waits, saying when it gives up',
      obs: { databaseReady: false, deletionStartedAt: ago(60_000), backups: [{ name: 'b1', attempt: 1 }] },
      expect: { kind: 'wait-backup', name: 'b1', giveUpInMs: FINAL_BACKUP_READY_BOUND_MS - 60_000 },
    },
    {
      name: 'database not Ready past the bound: retain',
      obs: {
        databaseReady: false,
        deletionStartedAt: ago(FINAL_BACKUP_READY_BOUND_MS + 1),
        backups: [{ name: 'b1', attempt: 1 }],
      },
      expect: retain('DatabaseNotReady'),
    },
    {
      name: 'a backup that succeeded without a result is not retried: retain',
      obs: {
        backups: [{ name: 'b1', attempt: 1, phase: 'Failed', reason: 'NoResult', failedAt: ago(600_000) }],
      },
      expect: retain('FinalBackupNoResult'),
    },
    {
      name: 'an ordinary failed backup is still retried (visible, counted)',
      obs: { backups: [{ name: 'b1', attempt: 1, phase: 'Failed', failedAt: ago(600_000) }] },
      expect: { kind: 'create-backup', attempt: 2 },
    },
    {
      name: 'a volume with a ready snapshot is not retained; the one without is',
      obs: {
        snapshotClass: 'csi',
        dataVolumes: [volume(), volume({ name: 'data-orders-1', volumeName: 'pv-2', deleting: true })],
        snapshots: [{ name: 's0', pvcName: 'data-orders-0', readyToUse: true }],
      },
      expect: retain('ClaimDeleting', [{ pvc: 'data-orders-1', pv: 'pv-2' }]),
    },
    {
      name: 'an unbound claim holds no data: nothing to retain, the workload goes',
      obs: { protectionRefused: 'NamespaceTerminating', dataVolumes: [volume({ volumeName: undefined })] },
      expect: { kind: 'delete-statefulset' },
    },
    {
      name: 'retained: the workload goes next (protected)',
      obs: { protectionRefused: 'NamespaceTerminating', dataVolumes: [volume({ retained: true })] },
      expect: { kind: 'delete-statefulset' },
    },
    {
      name: 'retained and the workload gone: the claim is deleted (its volume stays, Released)',
      obs: {
        protectionRefused: 'NamespaceTerminating',
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [volume({ retained: true })],
      },
      expect: { kind: 'delete-data-volumes', names: ['data-orders-0'] },
    },
    {
      name: 'deleted and retained: released from our finalizer, never kept forever',
      obs: {
        protectionRefused: 'NamespaceTerminating',
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [volume({ retained: true, deleting: true })],
      },
      expect: { kind: 'release-data-volumes', names: ['data-orders-0'] },
    },
    {
      name: 'released: the SampleDB finalizer goes',
      obs: {
        protectionRefused: 'NamespaceTerminating',
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [volume({ retained: true, deleting: true, held: false })],
      },
      expect: { kind: 'remove-finalizer' },
    },
    {
      name: 'policy Retain and the namespace deletes the claim: its volume is retained',
      obs: {
        policy: 'Retain',
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [volume({ deleting: true })],
      },
      expect: retain('RetainPolicy'),
    },
    {
      name: 'policy Retain, claim not deleted: labelled orphaned, then released',
      obs: { policy: 'Retain', statefulSet: 'absent', databasePodExists: false },
      expect: { kind: 'orphan-data-volumes', names: ['data-orders-0'] },
    },
    {
      name: 'policy Delete and the claim Terminating: released, nothing retained',
      obs: {
        policy: 'Delete',
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [volume({ deleting: true })],
      },
      expect: { kind: 'release-data-volumes', names: ['data-orders-0'] },
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(next(observation(c.obs)), c.expect));

  it('the plan says protected only once the volumes are retained, and names them', () => {
    const before = planDeletion(observation({ protectionRefused: 'NamespaceTerminating' }));
    assert.equal(before.protected, false);
    const after = planDeletion(
      observation({ protectionRefused: 'NamespaceTerminating', dataVolumes: [volume({ retained: true })] }),
    );
    assert.equal(after.protected, true);
    assert.equal(after.retained?.decision.cause, 'NamespaceTerminating');
    assert.deepEqual(after.retained?.volumes, [{ pvc: 'data-orders-0', pv: 'pv-1' }]);
  });
});

describe('deletionCondition: the status names the retained volume', () => {
  const instance = resolveInstance(sampleDb({}, { deletionTimestamp: ago(1000) }));
  it('while retaining: False, DataRetained, the PV and the cause', () => {
    const c = deletionCondition(
      instance,
      planDeletion(observation({ protectionRefused: 'NamespaceTerminating' })),
    );
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'DataRetained');
    assert.match(c.message, /PersistentVolume pv-1 \(claim data-orders-0\)/);
    assert.match(c.message, /NamespaceTerminating/);
  });
  it('once retained: True, DataRetained, the PV and how to recover', () => {
    const c = deletionCondition(
      instance,
      planDeletion(
        observation({ protectionRefused: 'NamespaceTerminating', dataVolumes: [volume({ retained: true })] }),
      ),
    );
    assert.equal(c.status, 'True');
    assert.equal(c.reason, 'DataRetained');
    assert.match(c.message, /PersistentVolume pv-1/);
    assert.match(c.message, /docs\/deletion\.md/);
  });
});

describe('planClaims: claims outside a deletion', () => {
  const kinds = (a: ReturnType<typeof planClaims>) =>
    a.kind === 'retain' ? { kind: a.kind, volumes: a.volumes, cause: a.decision.cause } : a;
  const cases: {
    name: string;
    policy: 'Snapshot' | 'Delete' | 'Retain' | undefined;
    volumes: DataVolume[];
    expect: unknown;
  }[] = [
    {
      name: 'live: a new claim is held',
      policy: 'Snapshot',
      volumes: [volume({ held: false })],
      expect: { kind: 'hold', names: ['data-orders-0'] },
    },
    {
      name: 'live: held claims need nothing',
      policy: 'Snapshot',
      volumes: [volume()],
      expect: { kind: 'none' },
    },
    {
      name: 'live: a claim deleted by hand keeps its data on a Retain volume first',
      policy: 'Snapshot',
      volumes: [volume({ deleting: true })],
      expect: { kind: 'retain', volumes: [{ pvc: 'data-orders-0', pv: 'pv-1' }], cause: 'ClaimDeleting' },
    },
    {
      name: 'live: then it is released',
      policy: 'Retain',
      volumes: [volume({ deleting: true, retained: true })],
      expect: { kind: 'release', names: ['data-orders-0'] },
    },
    {
      name: 'live, policy Delete: a deleted claim is released without retaining',
      policy: 'Delete',
      volumes: [volume({ deleting: true })],
      expect: { kind: 'release', names: ['data-orders-0'] },
    },
    {
      name: 'gone: a claim being deleted keeps its data (policy unknown)',
      policy: undefined,
      volumes: [volume({ deleting: true })],
      expect: { kind: 'retain', volumes: [{ pvc: 'data-orders-0', pv: 'pv-1' }], cause: 'SampleDbGone' },
    },
    {
      name: 'gone: every held claim is released, deleted or not (never stuck)',
      policy: undefined,
      volumes: [volume(), volume({ name: 'data-orders-1', deleting: true, retained: true })],
      expect: { kind: 'release', names: ['data-orders-0', 'data-orders-1'] },
    },
    {
      name: 'gone: nothing of ours left',
      policy: undefined,
      volumes: [volume({ held: false })],
      expect: { kind: 'none' },
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(kinds(planClaims(c.policy, c.volumes)), c.expect));
});

describe('isNamespaceTerminating: the apiserver refusing a create in a namespace being deleted', () => {
  // The body kube-apiserver v1.36 answered (NamespaceLifecycle admission), as the probe on the test control plane saw.
  const refused = new ApiError(403, 'POST', '/api/v1/namespaces/probe/configmaps', {
    kind: 'Status',
    status: 'Failure',
    reason: 'Forbidden',
    message:
      'configmaps "x" is forbidden: unable to create new content in namespace probe because it is being terminated',
    details: {
      name: 'x',
      kind: 'configmaps',
      causes: [
        {
          reason: 'NamespaceTerminating',
          message: 'namespace probe is being terminated',
          field: 'metadata.namespace',
        },
      ],
    },
    code: 403,
  });
  it('matches that refusal, and not an RBAC 403 or another error', () => {
    assert.equal(isNamespaceTerminating(refused), true);
    const rbac = new ApiError(403, 'POST', '/x', {
      reason: 'Forbidden',
      message: 'cannot create resource',
      code: 403,
    });
    assert.equal(isNamespaceTerminating(rbac), false);
    assert.equal(isNamespaceTerminating(new Error('boom')), false);
  });
});

describe('heldClaimsOfGone: the SampleDBs whose claims our finalizer still holds', () => {
  const claim = (name: string, instance: string, finalizers: string[]) =>
    ({
      metadata: {
        name,
        namespace: 'shop',
        finalizers,
        labels: {
          'app.kubernetes.io/name': 'sampledb',
          'app.kubernetes.io/managed-by': 'sampledb-operator',
          'app.kubernetes.io/instance': instance,
        },
      },
    }) as KubeObject;
  it('names only a gone SampleDB with a held claim', () => {
    const view = { get: (_rt: unknown, _ns: string, name: string) => (name === 'live' ? {} : undefined) };
    const refs = heldClaimsOfGone(
      [
        claim('data-live-0', 'live', ['sampledb.io/data-protection']),
        claim('data-gone-0', 'gone', ['sampledb.io/data-protection']),
        claim('data-free-0', 'free', []),
      ],
      view as unknown as ClusterView,
    );
    assert.deepEqual(refs, [{ namespace: 'shop', name: 'gone' }]);
  });
});
