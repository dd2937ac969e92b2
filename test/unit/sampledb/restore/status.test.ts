// The SampleDBRestore status (pure): which database holds the replaced data while it exists, when the restored data
// went live, and the Completed condition's reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbRestoreObject } from '../../../../src/api/index.ts';
import { planRestore, type RestoreObservation } from '../../../../src/sampledb/restore/plan.ts';
import { restoreStatus } from '../../../../src/sampledb/restore/reconciler.ts';

const restore: SampleDbRestoreObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBRestore',
  metadata: { name: 'undo', namespace: 'shop', generation: 1 },
  spec: { sampleDB: { name: 'orders' }, backup: { name: 'nightly' } },
};
const base: RestoreObservation = {
  name: 'undo',
  sampleDbName: 'orders',
  previousDatabase: 'app_sdb_pre_0123abcd',
  stagingDatabase: 'app_sdb_restoring',
  db: { ready: true, serviceBlocked: false },
  source: { phase: 'Completed', ofSampleDb: 'orders', checksum: `sha256:${'d'.repeat(64)}` },
  restoreJob: { state: 'succeeded' },
};
const now = new Date('2026-12-07T13:00:00Z');
const times = {
  writesStoppedAt: undefined,
  writesStoppedSeconds: undefined,
  restoredAt: '2026-12-07T12:59:00Z',
};
const statusOf = (o: RestoreObservation) => restoreStatus(restore, o, planRestore(o), now, times);

describe('restoreStatus', () => {
  it('names the previous database from the switch until the cleanup dropped it', () => {
    assert.equal(statusOf(base).previousDatabase, 'app_sdb_pre_0123abcd');
    const backedUp = { ...base, safety: { phase: 'Completed', ofPrevious: true } };
    assert.equal(statusOf(backedUp).previousDatabase, 'app_sdb_pre_0123abcd');
    const done = statusOf({ ...backedUp, cleanupJob: { state: 'succeeded' } });
    assert.equal(done.previousDatabase, undefined);
    assert.equal(done.phase, 'Completed');
    assert.equal(done.restoredAt, '2026-12-07T12:59:00Z');
    assert.equal(done.conditions?.[0]?.reason, 'Restored');
    assert.equal(done.conditions?.[0]?.status, 'True');
  });

  it('keeps naming it when it is kept, and never before the switch', () => {
    const kept = statusOf({ ...base, safety: { phase: 'Failed', message: 'disk full', ofPrevious: true } });
    assert.equal(kept.previousDatabase, 'app_sdb_pre_0123abcd');
    assert.equal(kept.conditions?.[0]?.reason, 'PreviousDataKept');
    const failed = statusOf({ ...base, restoreJob: { state: 'failed', message: 'verification failed: x' } });
    assert.equal(failed.previousDatabase, undefined);
  });
});
