import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backupRetryDelayMs,
  type DeletionObservation,
  planDeletion,
} from '../../../src/sampledb/deletion/plan.ts';

const now = new Date('2026-01-01T12:00:00Z');

function observation(overrides: Partial<DeletionObservation> = {}): DeletionObservation {
  return {
    policy: 'Snapshot',
    dataVolumes: [{ name: 'data-orders-0', deleting: false, orphaned: false, held: true, retained: false }],
    snapshots: [],
    backups: [],
    statefulSet: 'present',
    databasePodExists: true,
    databaseReady: true,
    backupObjects: [],
    now,
    ...overrides,
  };
}

describe('planDeletion: Snapshot policy', () => {
  it('takes a final backup first when no VolumeSnapshotClass is available, deleting nothing', () => {
    const plan = planDeletion(observation());
    assert.equal(plan.method, 'backup');
    assert.equal(plan.protected, false);
    assert.deepEqual(plan.next, { kind: 'create-backup', attempt: 1 });
  });

  it('snapshots each data volume when a class is available', () => {
    const plan = planDeletion(observation({ snapshotClass: 'csi' }));
    assert.deepEqual(plan.next, { kind: 'create-snapshot', pvcName: 'data-orders-0', className: 'csi' });
  });

  it('waits for every snapshot to be readyToUse and reports their errors', () => {
    const plan = planDeletion(
      observation({
        snapshotClass: 'csi',
        snapshots: [{ name: 's1', pvcName: 'data-orders-0', readyToUse: false, error: 'quota exceeded' }],
      }),
    );
    assert.deepEqual(plan.next, { kind: 'wait-snapshot', pending: ['s1'], errors: ['s1: quota exceeded'] });
    assert.equal(plan.protected, false);
  });

  it('keeps the method it started with even if the snapshot class disappears or appears', () => {
    const started = planDeletion(
      observation({ backups: [{ name: 'b1', attempt: 1, phase: 'Running' }], snapshotClass: 'csi' }),
    );
    assert.equal(started.method, 'backup');
    assert.deepEqual(started.next, { kind: 'wait-backup', name: 'b1' });
    const snapshotting = planDeletion(
      observation({ snapshots: [{ name: 's1', pvcName: 'data-orders-0', readyToUse: false }] }),
    );
    assert.equal(snapshotting.method, 'snapshot');
    assert.equal(snapshotting.next.kind, 'wait-snapshot');
  });

  it('deletes the StatefulSet only after the backup completed, then waits for the pod, then the PVCs', () => {
    const done = [{ name: 'b1', attempt: 1, phase: 'Completed' as const }];
    assert.deepEqual(planDeletion(observation({ backups: done })).next, { kind: 'delete-statefulset' });
    assert.deepEqual(planDeletion(observation({ backups: done, statefulSet: 'deleting' })).next, {
      kind: 'wait-workload-gone',
    });
    assert.deepEqual(planDeletion(observation({ backups: done, statefulSet: 'absent' })).next, {
      kind: 'wait-workload-gone',
    });
    assert.deepEqual(
      planDeletion(observation({ backups: done, statefulSet: 'absent', databasePodExists: false })).next,
      { kind: 'delete-data-volumes', names: ['data-orders-0'] },
    );
  });

  it('never deletes a PVC twice and removes the finalizer once every PVC is being deleted', () => {
    const plan = planDeletion(
      observation({
        backups: [{ name: 'b1', attempt: 1, phase: 'Completed' }],
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [
          { name: 'data-orders-0', deleting: true, orphaned: false, held: false, retained: false },
        ],
      }),
    );
    assert.deepEqual(plan.next, { kind: 'remove-finalizer' });
  });

  it('keeps the backups PVC under Snapshot (it holds the final dump)', () => {
    const plan = planDeletion(
      observation({
        backups: [{ name: 'b1', attempt: 1, phase: 'Completed' }],
        statefulSet: 'absent',
        databasePodExists: false,
        dataVolumes: [],
        backupVolume: { name: 'orders-backups', deleting: false },
      }),
    );
    assert.deepEqual(plan.next, { kind: 'remove-finalizer' });
  });

  it('after a failed backup deletes nothing and retries with backoff', () => {
    const failedAt = new Date(now.getTime() - 10_000).toISOString();
    const waiting = planDeletion(
      observation({ backups: [{ name: 'b1', attempt: 1, phase: 'Failed', failedAt, message: 'boom' }] }),
    );
    assert.equal(waiting.protected, false);
    assert.deepEqual(waiting.next, { kind: 'wait-backup', name: 'b1', retryInMs: 20_000, lastError: 'boom' });
    const due = planDeletion(
      observation({
        backups: [
          {
            name: 'b1',
            attempt: 1,
            phase: 'Failed',
            failedAt: new Date(now.getTime() - 31_000).toISOString(),
          },
        ],
      }),
    );
    assert.deepEqual(due.next, { kind: 'create-backup', attempt: 2 });
  });

  it('needs no protection when there is no data volume at all', () => {
    const plan = planDeletion(observation({ dataVolumes: [] }));
    assert.equal(plan.method, 'none');
    assert.deepEqual(plan.next, { kind: 'delete-statefulset' });
  });
});

describe('planDeletion: Delete and Retain', () => {
  it('Delete removes workload, data PVCs, backups, then the backups PVC, without a backup', () => {
    const base = { policy: 'Delete' as const, statefulSet: 'absent' as const, databasePodExists: false };
    assert.deepEqual(planDeletion(observation({ policy: 'Delete' })).next, { kind: 'delete-statefulset' });
    assert.deepEqual(planDeletion(observation(base)).next, {
      kind: 'delete-data-volumes',
      names: ['data-orders-0'],
    });
    // Deleted (deletionTimestamp set), the claim is released from our finalizer; nothing is retained under Delete.
    assert.deepEqual(
      planDeletion(
        observation({
          ...base,
          dataVolumes: [
            {
              name: 'data-orders-0',
              deleting: true,
              orphaned: false,
              held: true,
              volumeName: 'pv-1',
              retained: false,
            },
          ],
        }),
      ).next,
      { kind: 'release-data-volumes', names: ['data-orders-0'] },
    );
    const volumesGone = { ...base, dataVolumes: [] };
    assert.deepEqual(planDeletion(observation({ ...volumesGone, backupObjects: ['nightly'] })).next, {
      kind: 'delete-backup-objects',
      names: ['nightly'],
    });
    assert.deepEqual(
      planDeletion(observation({ ...volumesGone, backupVolume: { name: 'orders-backups', deleting: false } }))
        .next,
      { kind: 'delete-backup-volume', name: 'orders-backups' },
    );
    assert.deepEqual(
      planDeletion(observation({ ...volumesGone, backupVolume: { name: 'orders-backups', deleting: true } }))
        .next,
      { kind: 'remove-finalizer' },
    );
  });

  it('Retain labels the data PVCs orphaned instead of deleting them', () => {
    const base = { policy: 'Retain' as const, statefulSet: 'absent' as const, databasePodExists: false };
    assert.deepEqual(planDeletion(observation(base)).next, {
      kind: 'orphan-data-volumes',
      names: ['data-orders-0'],
    });
    assert.deepEqual(
      planDeletion(
        observation({
          ...base,
          dataVolumes: [
            { name: 'data-orders-0', deleting: false, orphaned: true, held: true, retained: false },
          ],
        }),
      ).next,
      { kind: 'release-data-volumes', names: ['data-orders-0'] },
    );
    assert.deepEqual(
      planDeletion(
        observation({
          ...base,
          dataVolumes: [
            { name: 'data-orders-0', deleting: false, orphaned: true, held: false, retained: false },
          ],
        }),
      ).next,
      { kind: 'remove-finalizer' },
    );
  });
});

describe('backupRetryDelayMs', () => {
  it('doubles from 30 s and stops at 10 min', () => {
    assert.deepEqual([1, 2, 3, 6, 20].map(backupRetryDelayMs), [30_000, 60_000, 120_000, 600_000, 600_000]);
  });
});
