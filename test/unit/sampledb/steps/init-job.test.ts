import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { parseBackupLocation, resolveRestoreSource } from '../../../../src/sampledb/steps/init-job.ts';
import { sampleDbBackup } from '../../../support/sampledb.ts';

describe('restore source (bootstrap.fromBackup)', () => {
  const backup = (status: SampleDbBackupObject['status']) => sampleDbBackup('nightly', 'orders', status);
  it('parses pvc:// locations', () => {
    assert.deepEqual(parseBackupLocation('pvc://orders-backups/orders/nightly.dump'), {
      claimName: 'orders-backups',
      path: 'orders/nightly.dump',
    });
    assert.equal(parseBackupLocation('s3://bucket/x'), undefined);
  });
  it('waits for a missing or unfinished backup, and uses a completed one with its checksum', () => {
    assert.equal(resolveRestoreSource('nightly', undefined).ok, false);
    const running = resolveRestoreSource('nightly', backup({ phase: 'Running' }));
    assert.ok(!running.ok && running.reason === 'BackupNotCompleted');
    const checksum = `sha256:${'a'.repeat(64)}`;
    assert.deepEqual(
      resolveRestoreSource(
        'nightly',
        backup({ phase: 'Completed', location: 'pvc://orders-backups/orders/nightly.dump', checksum }),
      ),
      { ok: true, source: { claimName: 'orders-backups', path: 'orders/nightly.dump', checksum } },
    );
  });
});
