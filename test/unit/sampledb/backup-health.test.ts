import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../src/api/index.ts';
import { backupHealth, backupHealthRecheckMs } from '../../../src/sampledb/backup-health.ts';
import { LIVE_STEPS } from '../../../src/sampledb/reconciler.ts';
import { sampleDb, sampleDbBackup } from '../../support/sampledb.ts';

const NOW = new Date('2026-01-10T12:00:00Z');
// Hourly: twice the interval is two hours.
const db = sampleDb({ backup: { schedule: '0 * * * *' } }, { creationTimestamp: '2026-01-01T00:00:00Z' });

function scheduled(
  name: string,
  slot: string,
  phase: 'Completed' | 'Failed',
  message?: string,
): SampleDbBackupObject {
  const b = sampleDbBackup(name, 'orders', {
    phase,
    ...(phase === 'Completed' ? { completedAt: slot } : {}),
    ...(message ? { message } : {}),
  });
  return {
    ...b,
    metadata: {
      ...b.metadata,
      labels: { 'sampledb.io/trigger': 'schedule' },
      annotations: { 'sampledb.io/scheduled-at': slot },
    },
  };
}

describe('backupHealth', () => {
  it('is True when a backup completed within twice the interval', () => {
    const c = backupHealth({ db, backups: [scheduled('b1', '2026-01-10T11:00:00Z', 'Completed')], now: NOW });
    assert.equal(c?.status, 'True');
    assert.equal(c?.reason, 'BackupsHealthy');
  });

  it('is False when the latest scheduled backup failed, quoting why', () => {
    const c = backupHealth({
      db,
      backups: [
        scheduled('b1', '2026-01-10T10:00:00Z', 'Completed'),
        scheduled('b2', '2026-01-10T11:00:00Z', 'Failed', 'pg_dump: connection refused'),
      ],
      now: NOW,
    });
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'LatestBackupFailed');
    assert.match(c?.message ?? '', /b2 failed: pg_dump: connection refused/);
  });

  it('is False when nothing completed within twice the interval, also when none ever did', () => {
    const stale = backupHealth({
      db,
      backups: [scheduled('b1', '2026-01-10T09:00:00Z', 'Completed')],
      now: NOW,
    });
    assert.equal(stale?.reason, 'NoRecentBackup');
    assert.match(stale?.message ?? '', /last 2h .*2026-01-10T09:00:00.000Z/);
    assert.equal(backupHealth({ db, backups: [], now: NOW })?.reason, 'NoRecentBackup');
    const young = sampleDb(
      { backup: { schedule: '0 * * * *' } },
      { creationTimestamp: '2026-01-10T11:30:00Z' },
    );
    assert.equal(backupHealth({ db: young, backups: [], now: NOW })?.status, 'True', 'not due yet');
  });

  it('says nothing without an active schedule, and ignores other SampleDBs', () => {
    assert.equal(backupHealth({ db: sampleDb(), backups: [], now: NOW }), undefined);
    const suspended = sampleDb({ backup: { schedule: '0 * * * *', suspend: true } });
    assert.equal(backupHealth({ db: suspended, backups: [], now: NOW }), undefined);
    const theirs = {
      ...scheduled('x', '2026-01-10T11:00:00Z', 'Completed'),
      spec: { sampleDB: { name: 'other' } },
    };
    assert.equal(backupHealth({ db, backups: [theirs], now: NOW })?.reason, 'NoRecentBackup');
  });

  it('with backup.verify: False when the latest finished verification failed, True again once a later one passes', () => {
    const verifying = sampleDb({ backup: { verify: true } }, { creationTimestamp: '2026-01-01T00:00:00Z' });
    const failed = sampleDbBackup('a', 'orders', {
      phase: 'Completed',
      completedAt: '2026-01-10T10:00:00Z',
      verified: false,
      verification: { phase: 'Failed', completedAt: '2026-01-10T10:05:00Z', message: 'row counts differ' },
    });
    const health = backupHealth({ db: verifying, backups: [failed], now: NOW });
    assert.deepEqual([health?.status, health?.reason], ['False', 'VerificationFailed']);
    assert.match(health?.message ?? '', /Backup a failed verification: row counts differ/);
    const passed = sampleDbBackup('b', 'orders', {
      phase: 'Completed',
      completedAt: '2026-01-10T11:00:00Z',
      verified: true,
      verification: { phase: 'Verified', completedAt: '2026-01-10T11:05:00Z' },
    });
    const running = sampleDbBackup('c', 'orders', { phase: 'Completed', verification: { phase: 'Running' } });
    const again = backupHealth({ db: verifying, backups: [failed, passed, running], now: NOW });
    assert.deepEqual([again?.status, again?.reason], ['True', 'BackupsHealthy']);
    assert.match(again?.message ?? '', /latest verification \(b\) passed/);
    // A failed verification wins over a healthy schedule.
    const both = sampleDb(
      { backup: { verify: true, schedule: '0 * * * *' } },
      { creationTimestamp: '2026-01-01T00:00:00Z' },
    );
    const recent = scheduled('s', '2026-01-10T11:00:00Z', 'Completed');
    assert.equal(
      backupHealth({ db: both, backups: [recent, failed], now: NOW })?.reason,
      'VerificationFailed',
    );
    assert.equal(backupHealth({ db: both, backups: [recent, failed, passed], now: NOW })?.status, 'True');
  });
});

describe('backupHealthRecheckMs (the requeue at the overdue deadline)', () => {
  // A fake clock: the test moves it, nothing waits.
  const clock = (start: string) => {
    let t = Date.parse(start);
    return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  };
  const everyMinute = sampleDb(
    { backup: { schedule: '* * * * *' } },
    { creationTimestamp: '2026-01-10T12:00:00Z' },
  );

  it('comes back exactly when the condition turns False: twice the interval after creation', () => {
    const c = clock('2026-01-10T12:00:37Z');
    const input = () => ({ db: everyMinute, backups: [], now: c.now() });
    assert.equal(backupHealth(input())?.status, 'True');
    const wait = backupHealthRecheckMs(input());
    assert.equal(wait, 120_000 - 37_000 + 1);
    c.advance((wait ?? 0) - 1);
    assert.equal(backupHealth(input())?.status, 'True', 'one millisecond before the deadline');
    c.advance(1);
    assert.equal(backupHealth(input())?.reason, 'NoRecentBackup', 'at the deadline');
    assert.equal(backupHealthRecheckMs(input()), undefined, 'False: only a completed backup changes it');
  });

  it('counts from the last completed backup, the earliest upcoming deadline', () => {
    const c = clock('2026-01-10T12:05:10Z');
    const backups = [
      scheduled('b1', '2026-01-10T12:03:02Z', 'Completed'),
      scheduled('b2', '2026-01-10T12:04:02Z', 'Completed'),
    ];
    const wait = backupHealthRecheckMs({ db: everyMinute, backups, now: c.now() });
    assert.equal(wait, Date.parse('2026-01-10T12:06:02Z') - c.now().getTime() + 1);
  });

  it('waits at least a second and at most a day (a Node timer past 2^31 ms fires at once)', () => {
    const monthly = sampleDb(
      { backup: { schedule: '0 0 1 * *' } },
      { creationTimestamp: '2026-01-10T12:00:00Z' },
    );
    assert.equal(backupHealthRecheckMs({ db: monthly, backups: [], now: NOW }), 24 * 3_600_000);
    const due = clock('2026-01-10T12:01:59.9995Z');
    assert.equal(backupHealthRecheckMs({ db: everyMinute, backups: [], now: due.now() }), 1_000);
  });

  it('asks for no requeue when only an event can change it: failed, suspended, no schedule', () => {
    const failed = [scheduled('b1', '2026-01-10T11:00:00Z', 'Failed', 'disk full')];
    assert.equal(backupHealthRecheckMs({ db, backups: failed, now: NOW }), undefined);
    const suspended = sampleDb({ backup: { schedule: '* * * * *', suspend: true } });
    assert.equal(backupHealthRecheckMs({ db: suspended, backups: [], now: NOW }), undefined);
    assert.equal(backupHealthRecheckMs({ db: sampleDb(), backups: [], now: NOW }), undefined);
  });

  it('is what the backup-health step of the live step table returns', async () => {
    const step = LIVE_STEPS.find((s) => s.name === 'backup-health');
    assert.ok(step);
    const c = clock('2026-01-10T12:00:37Z');
    const ctx = {
      instance: { object: everyMinute, namespace: everyMinute.metadata.namespace },
      view: { list: () => [] },
      now: c.now,
    } as unknown as Parameters<typeof step.run>[0];
    const outcome = await step.run(ctx);
    assert.equal(outcome?.requeueAfterMs, 120_000 - 37_000 + 1);
    assert.equal(outcome?.conditions?.[0]?.status, 'True');
  });
});
