// Backups belong to a SampleDB by uid: deleting a re-created same-name SampleDB under policy Delete leaves an
// earlier one's final and scheduled backups, and the backup volume their dumps are on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { observeDeletion } from '../../../../src/sampledb/deletion/observe.ts';
import { planDeletion } from '../../../../src/sampledb/deletion/plan.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { PVCS, SAMPLEDB_BACKUPS } from '../../../../src/sampledb/resources.ts';
import { sampleDb, sampleDbBackup } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';

const backupWith = (name: string, labels: Record<string, string>): SampleDbBackupObject => {
  const b = sampleDbBackup(name, 'orders', {
    phase: 'Completed',
    location: `pvc://orders-backups/orders/${name}.dump`,
  });
  return { ...b, metadata: { ...b.metadata, namespace: 'shop', labels } };
};

describe('deletion: backups by uid', () => {
  it("deletes only this SampleDB's backups and keeps the volume that holds an earlier one's", () => {
    const api = new FakeApiserver();
    const db = sampleDb(
      { deletion: { policy: 'Delete' } },
      { uid: 'new-uid', deletionTimestamp: '2026-02-01T00:00:00Z' },
    );
    api.put(PVCS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'orders-backups', namespace: 'shop' },
    });
    api.put(SAMPLEDB_BACKUPS, backupWith('old-final', { 'sampledb.io/final-for-uid': 'old-uid' }));
    api.put(SAMPLEDB_BACKUPS, backupWith('old-nightly', { 'sampledb.io/sampledb-uid': 'old-uid' }));
    api.put(SAMPLEDB_BACKUPS, backupWith('new-nightly', { 'sampledb.io/sampledb-uid': 'new-uid' }));
    api.put(SAMPLEDB_BACKUPS, backupWith('on-demand', {}));
    const { view } = api.operator();
    const obs = observeDeletion(resolveInstance(db), view, new Date('2026-02-01T00:00:00Z'));
    assert.deepEqual([...obs.backupObjects].sort(), ['new-nightly', 'on-demand']);
    assert.deepEqual([...(obs.othersOnBackupVolume ?? [])].sort(), ['old-final', 'old-nightly']);
    const afterObjects = {
      ...obs,
      statefulSet: 'absent' as const,
      databasePodExists: false,
      backupObjects: [],
    };
    assert.deepEqual(planDeletion({ ...afterObjects, snapshots: [], backups: [] }).next, {
      kind: 'remove-finalizer',
    });
    assert.deepEqual(planDeletion({ ...afterObjects, othersOnBackupVolume: [], backups: [] }).next, {
      kind: 'delete-backup-volume',
      name: 'orders-backups',
    });
  });
});
