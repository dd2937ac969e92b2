// BackupHealthy, decided from the SampleDB, its backups and the clock: the scheduled backup failing, none recent
// enough, and a failed verification each turn it False with their own reason; healthy backups keep it True.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../src/api/index.ts';
import { decideBackupHealth } from '../../../src/sampledb/backup-health.ts';
import { sampleDb, sampleDbBackup } from '../../support/sampledb.ts';

const NOW = new Date('2026-02-10T12:00:00Z');
const hourly = sampleDb({ backup: { schedule: '0 * * * *' } }, { creationTimestamp: '2026-02-01T00:00:00Z' });
const verifying = sampleDb({ backup: { verify: true } }, { creationTimestamp: '2026-02-01T00:00:00Z' });

function scheduled(slot: string, status: SampleDbBackupObject['status']): SampleDbBackupObject {
  const b = sampleDbBackup(`orders-${slot}`, 'orders', status);
  b.metadata.labels = { 'sampledb.io/trigger': 'schedule' };
  b.metadata.annotations = { 'sampledb.io/scheduled-at': slot };
  return b;
}
const completed = (at: string) => ({ phase: 'Completed' as const, completedAt: at });
const decide = (db = hourly, backups: SampleDbBackupObject[] = []) =>
  decideBackupHealth({ db, backups, now: NOW });

describe('decideBackupHealth', () => {
  it('says nothing when neither a schedule nor verification is set', () => {
    assert.deepEqual(decide(sampleDb({ backup: {} })), {});
  });

  it('is True while the scheduled backups succeed, and comes back when the next would be overdue', () => {
    const health = decide(hourly, [scheduled('2026-02-10T11:00:00Z', completed('2026-02-10T11:01:00Z'))]);
    assert.equal(health.condition?.status, 'True');
    assert.equal(health.condition?.reason, 'BackupsHealthy');
    // Completed 11:01, interval 1 h: overdue at 13:01, 61 min from now.
    assert.equal(health.recheckAfterMs, 61 * 60_000);
  });

  it('is False when the latest scheduled backup failed, even after earlier ones completed', () => {
    const health = decide(hourly, [
      scheduled('2026-02-10T10:00:00Z', completed('2026-02-10T10:01:00Z')),
      scheduled('2026-02-10T11:00:00Z', { phase: 'Failed', message: 'pg_dump: connection refused' }),
    ]);
    assert.deepEqual([health.condition?.status, health.condition?.reason], ['False', 'BackupFailed']);
    assert.match(
      health.condition?.message ?? '',
      /orders-2026-02-10T11:00:00Z failed: pg_dump: connection refused/,
    );
  });

  it('is False when no backup completed within twice the interval', () => {
    const health = decide(hourly, [scheduled('2026-02-10T09:00:00Z', completed('2026-02-10T09:01:00Z'))]);
    assert.deepEqual([health.condition?.status, health.condition?.reason], ['False', 'NoRecentBackup']);
    assert.match(health.condition?.message ?? '', /the last completed 2026-02-10T09:01:00.000Z/);
  });

  it('gives a new SampleDB twice the interval from its creation before calling backups overdue', () => {
    const young = sampleDb(
      { backup: { schedule: '0 * * * *' } },
      { creationTimestamp: '2026-02-10T11:30:00Z' },
    );
    assert.equal(decide(young).condition?.status, 'True');
    const old = sampleDb(
      { backup: { schedule: '0 * * * *' } },
      { creationTimestamp: '2026-02-10T09:30:00Z' },
    );
    assert.equal(decide(old).condition?.reason, 'NoRecentBackup');
  });

  it('is False when the latest finished verification failed, True again once a later one passes', () => {
    const failed = sampleDbBackup('a', 'orders', {
      ...completed('2026-02-10T10:00:00Z'),
      verified: false,
      verification: { phase: 'Failed', completedAt: '2026-02-10T10:05:00Z', message: 'row counts differ' },
    });
    const health = decide(verifying, [failed]);
    assert.deepEqual([health.condition?.status, health.condition?.reason], ['False', 'VerificationFailed']);
    assert.match(health.condition?.message ?? '', /Backup a failed verification: row counts differ/);
    const passed = sampleDbBackup('b', 'orders', {
      ...completed('2026-02-10T11:00:00Z'),
      verified: true,
      verification: { phase: 'Verified', completedAt: '2026-02-10T11:05:00Z' },
    });
    const running = sampleDbBackup('c', 'orders', {
      ...completed('2026-02-10T11:50:00Z'),
      verification: { phase: 'Running' },
    });
    const again = decide(verifying, [failed, passed, running]);
    assert.equal(again.condition?.status, 'True');
    assert.match(again.condition?.message ?? '', /latest verification \(b\) passed/);
  });

  it("ignores other SampleDBs' backups", () => {
    const other = sampleDbBackup('x', 'other', {
      ...completed('2026-02-10T10:00:00Z'),
      verification: { phase: 'Failed', completedAt: '2026-02-10T10:05:00Z' },
    });
    assert.equal(decide(verifying, [other]).condition?.status, 'True');
  });
});
