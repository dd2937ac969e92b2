import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { lastCompletedBackup } from '../../../../src/sampledb/steps/write-status.ts';
import { sampleDbBackup } from '../../../support/sampledb.ts';

describe('lastCompletedBackup (status.lastBackup)', () => {
  const backup = (status: SampleDbBackupObject['status']) => sampleDbBackup('nightly', 'orders', status);
  it('lastCompletedBackup picks the newest Completed backup of the SampleDB', () => {
    const b = (name: string, db: string, phase: 'Completed' | 'Failed', completedAt: string) =>
      ({
        ...backup({ phase, completedAt }),
        metadata: { name },
        spec: { sampleDB: { name: db } },
      }) as SampleDbBackupObject;
    assert.deepEqual(
      lastCompletedBackup('orders', [
        b('a', 'orders', 'Completed', '2026-01-01T00:00:00Z'),
        b('c', 'orders', 'Failed', '2026-01-03T00:00:00Z'),
        b('d', 'other', 'Completed', '2026-01-04T00:00:00Z'),
        b('b', 'orders', 'Completed', '2026-01-02T00:00:00Z'),
      ]),
      { name: 'b', completionTime: '2026-01-02T00:00:00Z' },
    );
  });
});
