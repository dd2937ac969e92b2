import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbStatus } from '../../../src/api/index.ts';
import { statusEvents } from '../../../src/sampledb/status-events.ts';

const status = (phase: string, ready: string, reason: string, message = ''): SampleDbStatus =>
  ({
    phase,
    endpoint: 'orders.shop.svc:5432',
    conditions: [
      { type: 'Ready', status: ready, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  }) as unknown as SampleDbStatus;

describe('statusEvents', () => {
  it('announces becoming Ready once, not a Ready status written again', () => {
    const ready = status('Ready', 'True', 'Ready');
    assert.deepEqual(statusEvents(status('Provisioning', 'False', 'Provisioning'), ready), [
      { type: 'Normal', reason: 'Ready', note: 'Ready at orders.shop.svc:5432.' },
    ]);
    assert.deepEqual(statusEvents(undefined, ready).length, 1);
    assert.deepEqual(statusEvents(ready, ready), []);
  });

  it('announces a failure with its reason and message, again only when the reason changes', () => {
    const initFailed = status('Failed', 'False', 'InitJobFailed', 'BackoffLimitExceeded: syntax error');
    assert.deepEqual(statusEvents(status('Provisioning', 'False', 'Provisioning'), initFailed), [
      { type: 'Warning', reason: 'Failed', note: 'InitJobFailed: BackoffLimitExceeded: syntax error' },
    ]);
    assert.deepEqual(statusEvents(initFailed, initFailed), []);
    const other = status('Failed', 'False', 'ImagePullFailed', 'no such image');
    assert.equal(statusEvents(initFailed, other)[0]?.note, 'ImagePullFailed: no such image');
  });

  it('leaves a refused child to its own ChildRejected Event', () => {
    assert.deepEqual(statusEvents(undefined, status('Failed', 'False', 'ChildRejected', 'invalid')), []);
  });

  describe('BackupHealthy', () => {
    /** A Ready SampleDB whose BackupHealthy condition is as given. */
    const withHealth = (health: string, reason: string, message: string): SampleDbStatus => {
      const ready = status('Ready', 'True', 'Ready');
      const conditions = [...(ready.conditions ?? [])];
      conditions.push({ ...conditions[0], type: 'BackupHealthy', status: health, reason, message } as never);
      return { ...ready, conditions } as SampleDbStatus;
    };
    const healthy = withHealth('True', 'BackupsHealthy', 'latest backup orders-20260101 completed');
    const overdue = withHealth('False', 'NoRecentBackup', 'no backup completed since 2026-01-01T00:00:00Z');
    const failed = withHealth('False', 'LatestBackupFailed', 'orders-20260102 failed: disk full');

    it('warns when backups turn unhealthy, with the reason and message, and not again for the same reason', () => {
      assert.deepEqual(statusEvents(healthy, overdue), [
        {
          type: 'Warning',
          reason: 'BackupsUnhealthy',
          note: 'NoRecentBackup: no backup completed since 2026-01-01T00:00:00Z',
        },
      ]);
      assert.deepEqual(statusEvents(overdue, overdue), []);
      assert.equal(
        statusEvents(overdue, failed)[0]?.note,
        'LatestBackupFailed: orders-20260102 failed: disk full',
      );
    });

    it('says once when they are healthy again, and nothing for a SampleDB that always was', () => {
      assert.deepEqual(statusEvents(failed, healthy), [
        { type: 'Normal', reason: 'BackupsHealthyAgain', note: 'latest backup orders-20260101 completed' },
      ]);
      assert.deepEqual(statusEvents(healthy, healthy), []);
      assert.deepEqual(statusEvents(undefined, withHealth('True', 'BackupsHealthy', '')).length, 1); // Ready only
    });

    it('announces a SampleDB that becomes Ready and unhealthy in one status write with both Events', () => {
      const reasons = statusEvents(undefined, failed).map((e) => e.reason);
      assert.deepEqual(reasons, ['Ready', 'BackupsUnhealthy']);
    });
  });
});
